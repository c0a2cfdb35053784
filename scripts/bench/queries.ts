/**
 * Distinct search queries for the benchmarks, as people type them: words of the real packs' names and
 * descriptions, prefixes, typos, two words, with OS and accelerator filters, repository and host node searches.
 * Seeded and never repeating (each query is new within one generator), drawn from the real packs only, so the
 * same queries run against every store size.
 */
import { REAL_NODES } from '../../test/support/seed'
import { picker, seededRandom } from './random'

const words = (texts: string[]) => [
  ...new Set(
    texts
      .flatMap((t) => t.split(/[^A-Za-z0-9]+/))
      .filter((w) => w.length >= 3)
      .map((w) => w.toLowerCase()),
  ),
]

const OS = ['POSIX', 'POSIX :: Linux', 'Microsoft :: Windows', 'MacOS', 'OS Independent']
const ACC = ['GPU', 'GPU :: NVIDIA CUDA', 'GPU :: AMD ROCm', 'NPU']

/** A function returning the query string (after `?`) of the next distinct /nodes/search query. */
export function distinctSearches(seed: number): () => string {
  const random = seededRandom(seed)
  const pick = picker(random)
  const real = REAL_NODES
  const all = words(real.map((n) => `${n.name} ${n.description}`))
  const names = words(real.map((n) => n.name))
  const long = names.filter((w) => w.length >= 6)
  const withHostNodes = real.filter((n) => n.host_nodes.length)
  const typo = (w: string) => {
    const i = 1 + Math.floor(random() * (w.length - 2))
    return w.slice(0, i) + w.slice(i + 1)
  }
  const enc = encodeURIComponent
  const makers: (() => string)[] = [
    () => `search=${pick(names)}`,
    () => `search=${pick(all)}`,
    () => `search=${pick(names).slice(0, 3 + Math.floor(random() * 3))}`,
    () => `search=${typo(pick(long))}`,
    () => `search=${pick(names)}%20${pick(names)}`,
    () => `search=${pick(all)}%20${pick(names)}`,
    () => `search=${pick(names)}&supported_os=${enc(pick(OS))}`,
    () => `search=${pick(names)}&supported_accelerator=${enc(pick(ACC))}&page=${1 + Math.floor(random() * 3)}`,
    () => `supported_os=${enc(pick(OS))}&supported_accelerator=${enc(pick(ACC))}&page=${1 + Math.floor(random() * 100)}`,
    () => `repository_url_search=${enc(pick(real).repository.replace('https://', '').split('/').slice(0, 2).join('/'))}`,
    // By code points: a cut inside a surrogate pair cannot be URI-encoded.
    () => `host_node_search=${enc([...pick(pick(withHostNodes).host_nodes)].slice(0, 6 + Math.floor(random() * 6)).join(''))}`,
    () => `search=${pick(names)}&include_banned=true&limit=${pick([10, 30])}`,
  ]
  const seen = new Set<string>()
  return () => {
    for (;;) {
      const q = pick(makers)()
      if (!seen.has(q)) {
        seen.add(q)
        return q
      }
    }
  }
}
