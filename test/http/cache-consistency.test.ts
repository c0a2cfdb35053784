/**
 * A differential test of everything the server keeps in memory and updates on writes (the search index, the node
 * JSON cache, the install, version-list and archive memos, the list-response cache, the download counter): a seeded
 * random run of writes of every kind, and every few steps each read is asked of the running app and of an app made
 * afresh on the same store (after the running app's pending download counts are flushed), which must answer alike:
 * node lists and searches with filters and pages, nodes, versions, installs, archives, publishers, the change feed
 * and the web pages, anonymously and as members and admins. Some writes run with reads beside them; the running app
 * is restarted once on its store, so that its index also goes on from a warm-up. Nothing is normalised: with the
 * counts flushed, the contract leaves no room for the two to differ.
 */
import { afterEach, test } from 'bun:test'
import { seededRandom } from '../../scripts/bench/random'
import { makeZip } from '../support/archives'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID as UNCLAIMED } from '../../src/domain/ids'
import { createRepoHost } from '../../src/upstream/repohost'
import { addPublisher, addPublisherToken, addUser, makeTestApp, publish, upload, type TestApp } from '../support/app'
import { startRepoHost, type FakeRepoHost } from '../support/repohost'
import { fastHttp } from '../support/mirror'
import { runSync } from '../../src/services/mirror/sync'

const apps: TestApp[] = []
const hosts: FakeRepoHost[] = []
afterEach(async () => {
  for (const t of apps.splice(0).reverse()) await t.cleanup()
  for (const h of hosts.splice(0)) await h.stop()
})

/** The benchmarks' seeded generator (mulberry32), with helpers: a failing run can be replayed. */
function generator(seed: number) {
  const next = seededRandom(seed)
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!
  const some = <T>(xs: readonly T[], max = 3): T[] => [...new Set(Array.from({ length: int(max + 1) }, () => pick(xs)))]
  return { next, int, pick, some, chance: (p: number) => next() < p }
}

const NODE_IDS = ['blur-pack', 'UltimateUpscale', 'color-tools', 'mask-kit', 'video-helper', 'depth-map', 'pose-ctl', 'audio-mix']
const WORDS = ['blur', 'upscale', 'colour', 'mask', 'video', 'depth', 'pose', 'audio', 'sharpen', 'latent', 'sampler', 'texture']
const CLASSES = ['BlurNode', 'UpscaleModel', 'MaskComposite', 'DepthEstimator', 'PoseDetector', 'AudioMixer', 'LatentTiler']
const OS = ['OS Independent', 'POSIX :: Linux', 'Microsoft :: Windows', 'MacOS']
const ACCELERATORS = ['CUDA', 'ROCm', 'Metal', 'CPU']
const PUBLISHERS = ['acme', 'bravo', 'charlie']
const FILLERS = Number(process.env.DIFFTEST_FILLERS ?? 100)
const VERSION_STATUSES = ['NodeVersionStatusActive', 'NodeVersionStatusBanned', 'NodeVersionStatusFlagged', 'NodeVersionStatusPending']

/** Where two answers part, with some text around it. */
function parting(a: string, b: string): string {
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  return `at ${i}: running ...${a.slice(Math.max(0, i - 150), i + 150)}...\n  fresh ...${b.slice(Math.max(0, i - 150), i + 150)}...`
}

/** An answer shortened for a failure message: a node list as its ids and order keys, anything else cut. */
function brief(answer: string): string {
  try {
    const body = JSON.parse(answer.slice(answer.indexOf(' ') + 1))
    if (Array.isArray(body.nodes)) {
      const nodes = body.nodes.map((n: any) => `${n.id}(r${n.search_ranking},d${n.downloads},${n.latest_version?.version})`)
      return `${answer.slice(0, 3)} total ${body.total} [${nodes.join(' ')}] ${answer.slice(0, 600)}`
    }
  } catch {}
  return answer.slice(0, 1500)
}

const pack = (classes: string[]) =>
  makeZip([{ name: '__init__.py', data: `NODE_CLASS_MAPPINGS = {${classes.map((c) => `${JSON.stringify(c)}: 1`).join(', ')}}` }])

/** A fresh app on `t`'s store and archives, at `t`'s time: what a restarted server would answer. */
async function freshOn(t: TestApp): Promise<TestApp> {
  const fresh = await makeTestApp({ store: t.deps.db, deps: { blobs: t.deps.blobs, repoHost: t.deps.repoHost } })
  fresh.clock.now = new Date(t.clock.now)
  return fresh
}

async function run(seed: number, steps: number, checkEvery: number) {
  const r = generator(seed)
  // A repository host on 127.0.0.1 for claims: each user's host token administers every repository.
  const host = startRepoHost()
  hosts.push(host)
  // In the mirror variant the writes go to an upstream served on 127.0.0.1, and the checks compare a mirror of it.
  const mirrored = !!process.env.DIFFTEST_MIRROR
  let served: ((req: Request) => Response | Promise<Response>) | undefined
  const server = mirrored ? Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => served!(req) }) : undefined
  const url = server ? `http://127.0.0.1:${server.port}` : undefined
  const base = await makeTestApp({
    deps: { repoHost: createRepoHost({ apiUrl: host.url, timeoutMs: 5000 }) },
    settings: url ? { publicUrl: url } : {},
  })
  apps.push(base)
  /** The running server: `base` until it is restarted on its store (its index then starts from a warm-up). */
  let t = base
  served = (req) => t.app.fetch(req)
  const downstream = mirrored ? await makeTestApp() : undefined
  if (downstream) apps.push(downstream)
  if (server) hosts.push({ stop: async () => void server.stop(true) } as FakeRepoHost)
  const admin = await addUser(t, 'admin', { admin: true })
  await addPublisher(t, admin, UNCLAIMED)
  const owner = new Map<string, string>()
  const pats = new Map<string, string>()
  owner.set(UNCLAIMED, admin)
  pats.set(UNCLAIMED, await addPublisherToken(t, admin, UNCLAIMED))
  for (const id of NODE_IDS) host.repos.set(`own/${id.toLowerCase()}`, { admins: PUBLISHERS.map((_, i) => `login${i}`) })
  const users: string[] = []
  for (const [i, p] of PUBLISHERS.entries()) {
    const token = await addUser(t, `user${i}`)
    users.push(token)
    await addPublisher(t, token, p)
    owner.set(p, token)
    pats.set(p, await addPublisherToken(t, token, p))
    host.users.set(`host-token${i}`, `login${i}`)
  }
  /** Where each node lives now (the store decides; this only picks plausible requests). */
  const home = new Map<string, string>()
  const versions = new Map<string, { id: string; version: string }[]>()
  const log: string[] = []
  const restartAt = Math.floor(steps / 3)
  // Many more nodes that words match, so that pages go past the first ones a search puts in order.
  for (let i = 0; i < FILLERS; i++) {
    const p = PUBLISHERS[i % PUBLISHERS.length]!
    const body = { id: `filler-${i}`, description: r.some(WORDS, 3).join(' '), tags: r.some(WORDS, 2), supported_os: r.some(OS, 1) }
    const res = await t.call('POST', `/publishers/${p}/nodes`, { token: owner.get(p), body })
    if (res.status !== 201) throw new Error(`filler: ${res.status} ${JSON.stringify(res.body)}`)
  }

  const nodeFields = () => {
    const f: Record<string, unknown> = {}
    if (r.chance(0.5)) f.description = r.some(WORDS, 4).join(' ')
    if (r.chance(0.3)) f.name = `${r.pick(WORDS)} ${r.pick(WORDS)}`
    if (r.chance(0.3)) f.tags = r.some(WORDS)
    if (r.chance(0.3)) f.author = r.pick(['Ann', 'Bob', 'Cy'])
    if (r.chance(0.3)) f.supported_os = r.some(OS, 2)
    if (r.chance(0.3)) f.supported_accelerators = r.some(ACCELERATORS, 2)
    if (r.chance(0.3)) f.repository = `https://github.com/${r.pick(['Foo', 'bar'])}/${r.pick(WORDS)}${r.pick(['', '.git', '/'])}`
    return f
  }
  const someNode = () => r.pick(NODE_IDS)
  const someVersion = (node: string) => {
    const vs = versions.get(node) ?? []
    return vs.length ? r.pick(vs) : undefined
  }
  const publisherOf = (node: string) => home.get(node) ?? r.pick(PUBLISHERS)

  const write = async (): Promise<string> => {
    const kind = r.int(17)
    const node = someNode()
    const p = publisherOf(node)
    switch (kind) {
      case 0:
      case 1:
      case 2: {
        const version = `${r.int(3)}.${r.int(4)}.${r.int(3)}`
        // Now and then the id in another case (a clash, 409) or the version spelled otherwise (v1.2 is 1.2.0).
        const asked = r.chance(0.1) ? node.toUpperCase() : node
        const spelledVersion = r.chance(0.1) ? `v${version.replace(/\.0$/, '')}` : version
        const res = await publish(t, { pat: pats.get(p)!, publisher: p, node: asked, version: spelledVersion, nodeFields: nodeFields() })
        if (res.status === 201) {
          home.set(node, p)
          versions.set(node, [...(versions.get(node) ?? []), { id: res.body.node_version.id, version: res.body.node_version.version }])
          const roll = r.next()
          if (roll < 0.75) await upload(t, res.body.signedUrl, pack(r.some(CLASSES, 2)))
          else if (roll < 0.85) await upload(t, res.body.signedUrl, new TextEncoder().encode('not a zip'))
        }
        return `publish ${p}/${node}@${version} ${res.status}`
      }
      case 3: {
        const res = await t.call('PUT', `/publishers/${p}/nodes/${node}`, { token: owner.get(p), body: nodeFields() })
        return `edit ${p}/${node} ${res.status}`
      }
      case 4: {
        const body: Record<string, unknown> = {}
        if (r.chance(0.5)) body.search_ranking = r.int(5)
        if (r.chance(0.3)) body.tags_admin = r.some(['featured', 'dev'])
        if (r.chance(0.2)) body.status = r.pick(['NodeStatusActive', 'NodeStatusBanned'])
        if (r.chance(0.2)) body.publisher = { id: r.pick(PUBLISHERS) }
        const res = await t.call('PUT', `/publishers/${p}/nodes/${node}`, { token: admin, body })
        if (res.status === 200) home.set(node, res.body.publisher?.id ?? p)
        return `admin edit ${p}/${node} ${JSON.stringify(body)} ${res.status}`
      }
      case 5: {
        const v = someVersion(node)
        if (!v) return 'no version'
        const body = { deprecated: r.chance(0.5), changelog: r.pick(WORDS) }
        const res = await t.call('PUT', `/publishers/${p}/nodes/${node}/versions/${v.id}`, { token: owner.get(p), body })
        return `version edit ${node}@${v.version} ${JSON.stringify(body)} ${res.status}`
      }
      case 6: {
        const v = someVersion(node)
        if (!v) return 'no version'
        const status = r.pick(VERSION_STATUSES)
        const res = await t.call('PUT', `/admin/nodes/${node}/versions/${v.version}`, {
          token: admin,
          body: { status, status_reason: `set ${r.int(100)}` },
        })
        return `version status ${node}@${v.version} ${status} ${res.status}`
      }
      case 7: {
        const action = r.pick(['ban', 'unban'])
        const res = await t.call('POST', `/publishers/${p}/nodes/${node}/${action}`, { token: admin, body: {} })
        return `${action} node ${p}/${node} ${res.status}`
      }
      case 8: {
        if (r.chance(0.7)) {
          const v = someVersion(node)
          if (!v) return 'no version'
          const res = await t.call('DELETE', `/publishers/${p}/nodes/${node}/versions/${v.id}`, { token: owner.get(p) })
          return `delete version ${node}@${v.version} ${res.status}`
        }
        if (!r.chance(0.3)) return 'kept node'
        const res = await t.call('DELETE', `/publishers/${p}/nodes/${node}`, { token: owner.get(p) })
        return `delete node ${p}/${node} ${res.status}`
      }
      case 9: {
        const q = r.pick(PUBLISHERS)
        const body: Record<string, unknown> = { name: `${r.pick(['Acme', 'Bravo', 'Zulu', 'Omega'])} ${r.pick(WORDS)}` }
        if (r.chance(0.3)) body.description = r.pick(WORDS)
        const res = await t.call('PUT', `/publishers/${q}`, { token: owner.get(q), body })
        return `rename publisher ${q} ${JSON.stringify(body)} ${res.status}`
      }
      case 10: {
        if (!r.chance(0.4)) return 'kept publisher'
        const q = r.pick(PUBLISHERS)
        const action = r.chance(0.35) ? 'ban' : 'unban'
        const res = await t.call('POST', `/publishers/${q}/${action}`, { token: admin, body: {} })
        return `${action} publisher ${q} ${res.status}`
      }
      case 11: {
        const star = 1 + r.int(5)
        const res = await t.call('POST', `/nodes/${node}/reviews?star=${star}`, { token: r.pick(users) })
        return `review ${node} ${star} ${res.status}`
      }
      case 12:
      case 13: {
        const v = r.chance(0.3) ? someVersion(node) : undefined
        let status = 0
        for (let i = 1 + r.int(3); i > 0; i--)
          status = (await t.call('GET', `/nodes/${node}/install${v ? `?version=${v.version}` : ''}`)).status
        if (r.chance(0.3)) await t.deps.downloads.flush()
        return `install ${node}${v ? `@${v.version}` : ''} ${status}`
      }
      case 16: {
        // An admin hands the node to the unclaimed publisher (with a repository on the host), or its owner claims it.
        if (home.get(node) !== UNCLAIMED) {
          const body = { publisher: { id: UNCLAIMED }, repository: `${host.web}/Own/${node}` }
          const res = await t.call('PUT', `/publishers/${p}/nodes/${node}`, { token: admin, body })
          if (res.status === 200) home.set(node, UNCLAIMED)
          return `unclaim ${p}/${node} ${res.status} ${res.body?.message ?? ''}`
        }
        const i = r.int(PUBLISHERS.length)
        const to = PUBLISHERS[i]!
        const res = await t.call('POST', `/publishers/${to}/nodes/${node}/claim-my-node`, {
          token: owner.get(to),
          body: { REPOHOST_TOKEN: `host-token${i}` },
        })
        if (res.status === 204) home.set(node, to)
        return `claim ${to}/${node} ${res.status} ${res.body?.message ?? ''}`
      }
      case 14: {
        const res = await t.call('POST', `/publishers/${p}/nodes`, { token: owner.get(p), body: { id: node, ...nodeFields() } })
        if (res.status === 201) home.set(node, p)
        return `create node ${p}/${node} ${res.status}`
      }
      default: {
        t.clock.now = new Date(t.clock.now.getTime() + r.int(3_600_000))
        return `clock ${t.clock.now.toISOString()}`
      }
    }
  }

  const reads = () => {
    const paths: string[] = []
    const filters = () => {
      const q = new URLSearchParams()
      if (r.chance(0.6)) q.set('search', r.pick([...WORDS, ...NODE_IDS, 'blurr', 'upscal', 'acme', 'zulu', 'ann', 'color tools']))
      if (r.chance(0.15)) q.set('repository_url_search', r.pick(['github.com/foo', 'BAR/', 'blur']))
      if (r.chance(0.15)) q.set('host_node_search', r.pick([...CLASSES, 'node', 'mask']))
      if (r.chance(0.15)) q.set('supported_os', r.pick(['POSIX', 'Microsoft :: Windows', 'macos']))
      if (r.chance(0.15)) q.set('supported_accelerator', r.pick(ACCELERATORS))
      if (r.chance(0.3)) q.set('include_banned', 'true')
      if (r.chance(0.4)) q.set('limit', String(r.pick([1 + r.int(4), 10 + r.int(30), 100])))
      if (r.chance(0.4)) q.set('page', String(1 + r.int(r.pick([3, 12]))))
      return q
    }
    for (let i = 0; i < 6; i++) paths.push(`/nodes/search?${filters()}`)
    for (let i = 0; i < 3; i++) paths.push(`/nodes?${filters()}`)
    paths.push('/nodes', '/nodes/search', '/nodes?include_banned=true&limit=100', `/nodes?node_id=${someNode()}&node_id=${someNode()}`)
    paths.push(`/nodes?timestamp=${new Date(t.clock.now.getTime() - r.int(7_200_000)).toISOString()}`)
    // Lookups ignore case and read versions leniently: the memos must not keep an answer per spelling.
    const variant = (id: string) => (r.chance(0.5) ? id.toUpperCase() : id)
    const spelled = (v: string) => r.pick([v, `v${v}`, v.replace(/\.0$/, '')])
    for (const id of NODE_IDS.filter(() => r.chance(0.3))) {
      const v = someVersion(id)
      paths.push(`/nodes/${variant(id)}`, `/nodes/${variant(id)}/versions`, `/-/nodes/${variant(id)}`)
      if (v) paths.push(`/nodes/${variant(id)}/versions/${spelled(v.version)}`, `/archives/x/${variant(id)}/${v.version}/node.zip`)
    }
    for (const id of NODE_IDS) {
      paths.push(
        `/nodes/${id}`,
        `/nodes/${id}/versions`,
        `/nodes/${id}/versions?statuses=NodeVersionStatusBanned&statuses=NodeVersionStatusDeleted`,
      )
      const v = someVersion(id)
      if (v) paths.push(`/nodes/${id}/versions/${v.version}`, `/nodes/${id}/versions/${v.version}/host-nodes`)
    }
    for (const p of [...PUBLISHERS, UNCLAIMED])
      paths.push(`/publishers/${p}`, `/publishers/${p}/nodes`, `/publishers/${p}/nodes/v2?limit=3&page=${1 + r.int(2)}`)
    paths.push('/publishers', `/host-nodes/${r.pick(CLASSES)}/node`, '/versions?pageSize=50')
    paths.push('/', `/-/results?search=${r.pick(WORDS)}`, `/-/nodes/${someNode()}`, `/-/publishers/${r.pick(PUBLISHERS)}`)
    paths.push(
      `/comfy-nodes/${r.pick(CLASSES)}/node`,
      `/nodes/${someNode()}/versions?include_status_reason=true`,
      '/changes?since=0&limit=1000',
    )
    // Archives as installers fetch them (their answers go through the archive memo), whatever the version's state.
    for (const id of NODE_IDS)
      for (const v of versions.get(id) ?? []) paths.push(`/archives/${publisherOf(id)}/${id}/${v.version}/node.zip`)
    return paths
  }

  /** What a client sees: the status and body (an archive's by its tag and length), as `as` (a bearer token) if given. */
  const answer = async (app: TestApp, path: string, as?: string) => {
    const res = await app.app.request(path, as ? { headers: { authorization: `Bearer ${as}` } } : undefined)
    if (path.startsWith('/archives/') && res.status === 200) {
      return `${res.status} ${res.headers.get('etag')} ${(await res.arrayBuffer()).byteLength}`
    }
    return `${res.status} ${await res.text()}`
  }

  const check = async (step: number) => {
    await t.deps.downloads.flush()
    const running = downstream ?? t
    if (downstream) {
      const during = r.some(reads(), 6)
      await Promise.all([
        runSync(downstream.deps, { from: url!, archives: 'eager', full: r.chance(0.2), fullEvery: 1000, http: fastHttp().http }),
        ...during.map((path) => answer(downstream, path)),
      ])
      await downstream.deps.downloads.flush()
    }
    const fresh = await freshOn(running)
    try {
      const paths = reads()
      // Installs count downloads, so they go last; the fresh app's counts are never flushed.
      for (const id of NODE_IDS) {
        paths.push(`/nodes/${id}/install`)
        const v = someVersion(id)
        if (v && r.chance(0.5))
          paths.push(`/nodes/${r.chance(0.5) ? id.toUpperCase() : id}/install?version=${r.pick([v.version, `v${v.version}`])}`)
      }
      const asked: [string, string | undefined][] = paths.map((path) => [path, undefined])
      // Members and admins see banned and flagged things others do not.
      for (const path of r.some(paths, 8)) asked.push([path, r.pick([admin, ...users])])
      for (const [path, as] of asked) {
        const [a, b] = [await answer(running, path, as), await answer(fresh, path, as)]
        if (a !== b) {
          throw new Error(
            `seed ${seed}, step ${step}: GET ${path} differs from a fresh server's${as ? ` (as ${as === admin ? 'admin' : `user${users.indexOf(as)}`})` : ''}\n  running: ${brief(a)}\n  fresh:   ${brief(b)}\n  ${parting(a, b)}\nwrites:\n${log.slice(-25).join('\n')}`,
          )
        }
      }
    } finally {
      await fresh.cleanup()
    }
  }

  for (let step = 1; step <= steps; step++) {
    if (step === restartAt) {
      await t.deps.downloads.flush()
      t = await freshOn(t)
      apps.push(t)
      log.push(`${step}: restart`)
    }
    // Reads between writes fill the caches whose invalidation the checks test.
    if (r.chance(0.5)) for (const path of reads().slice(0, 1 + r.int(12))) await answer(downstream ?? t, path)
    if (r.chance(0.3)) {
      // Reads while the write runs: an answer read before the write commits must not be kept as current.
      const during = r.some(reads(), 10)
      const [done] = await Promise.all([write(), ...during.map((path) => answer(t, path, r.chance(0.3) ? admin : undefined))])
      log.push(`${step}: ${done} (with ${during.length} reads)`)
    } else log.push(`${step}: ${await write()}`)
    if (step % checkEvery === 0) await check(step)
  }
  await check(steps + 1)
}

/**
 * With 60 steps both seeds (and most others) met first answers after writes that the keyword scorer computed with discarded
 * documents still counted, kept by the query cache (fixed). A longer hunt: DIFFTEST_SEEDS=1,2,...,40 DIFFTEST_STEPS=200
 * DIFFTEST_EVERY=2 (and DIFFTEST_FILLERS=1600 for publishers of more than one batch of the index's reads);
 * DIFFTEST_MIRROR=1 writes to an upstream on 127.0.0.1 and checks a mirror that syncs from it (reads beside the sync).
 */
const SEEDS = process.env.DIFFTEST_SEEDS?.split(',').map(Number) ?? [1, 2]
const STEPS = Number(process.env.DIFFTEST_STEPS ?? 60)
const EVERY = Number(process.env.DIFFTEST_EVERY ?? 4)

for (const seed of SEEDS) {
  test(
    `a running server answers as one started afresh on its store, through random writes (seed ${seed})`,
    () => run(seed, STEPS, EVERY),
    120_000,
  )
}
