/** Closed-loop HTTP load for the benchmarks: N clients, each sending its next request when the last one answered. */
import { loadavg } from 'node:os'

export interface LoadResult {
  requests: number
  seconds: number
  perSecond: number
  /** Latencies in milliseconds, sorted, over all requests (and per kind when requests carry one). */
  latencies: number[]
  byKind: Map<string, number[]>
  failures: number
}

export interface LoadRequest {
  path: string
  kind?: string
  /** Extra request headers. */
  headers?: Record<string, string>
  /** Statuses that count as success (default: 2xx and 304). */
  ok?: (status: number) => boolean
}

/**
 * Runs `clients` loops for `seconds` against `base`, each taking its next request from `next(client, i)`
 * (or until `next` returns undefined). Failures are counted, never thrown, so that one bad answer does not
 * lose a run; callers report them.
 */
export async function runLoad(
  base: string,
  opts: { clients: number; seconds: number; next: (client: number, i: number) => LoadRequest | undefined },
): Promise<LoadResult> {
  const latencies: number[] = []
  const byKind = new Map<string, number[]>()
  let failures = 0
  const started = performance.now()
  const until = started + opts.seconds * 1000
  await Promise.all(
    Array.from({ length: opts.clients }, async (_, client) => {
      for (let i = 0; performance.now() < until; i++) {
        const req = opts.next(client, i)
        if (!req) return
        const t0 = performance.now()
        let status = 0
        try {
          const res = await fetch(base + req.path, { headers: req.headers })
          await res.arrayBuffer()
          status = res.status
        } catch {
          status = 0
        }
        const ms = performance.now() - t0
        latencies.push(ms)
        if (req.kind) {
          let list = byKind.get(req.kind)
          if (!list) byKind.set(req.kind, (list = []))
          list.push(ms)
        }
        if (!(req.ok ? req.ok(status) : (status >= 200 && status < 300) || status === 304)) failures++
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  for (const list of byKind.values()) list.sort((a, b) => a - b)
  return { requests: latencies.length, seconds, perSecond: latencies.length / seconds, latencies, byKind, failures }
}

/** The p-th quantile (0..1) of sorted values. */
export const quantile = (sorted: readonly number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : NaN

/** Requests/s of GET /health under the same number of clients: the yardstick every ratio is taken against. */
export async function healthRate(base: string, clients: number, seconds: number): Promise<number> {
  return (await runLoad(base, { clients, seconds, next: () => ({ path: '/health' }) })).perSecond
}

/** The one-minute load average, printed beside every figure: the machine is shared. */
export const loadAverage = () => loadavg()[0]!.toFixed(2)

export const ms = (x: number) => `${x.toFixed(1)} ms`
export const pct = (x: number) => `${(x * 100).toFixed(0)}%`
