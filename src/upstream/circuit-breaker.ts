/**
 * A remembered recent failure per upstream host, for requests a person waits on (archives fetched on first
 * download). Once a request finds a host unreachable, requests to it fail at once for `openMs` instead of each
 * waiting out the network again; then one request probes the host (the others still fail at once) and its outcome
 * closes the breaker or opens it for another period. A host that answers anything (a 404 included) is up. A probe
 * that has not ended after `probeMaxMs` (stuck behind our own work, never asking) no longer holds the others back.
 */

export interface HostDown {
  /** The host's origin (scheme, host, port): never a path or query, which may carry a signature. */
  host: string
  since: Date
  /** Why the last try failed, for logs (it may name the host; answers say less). */
  reason: string
  /** Whether the last try ran out of time rather than failed. */
  timedOut: boolean
  /** When the next probe may go; while one is under way, undefined. */
  retryAt?: Date
}

/** How an admitted request ended: the host answered, could not be reached, or neither (stopped, our own failure). */
export type Outcome = { up: true } | { up: false; reason: string; timedOut: boolean } | 'unknown'

/**
 * Go ahead (and say how it went: the probe's outcome decides), or why not. `answered`: the host has answered (the
 * headers came), which closes the breaker at once, as a probe's body may take minutes; the request then counts as
 * any other (the client does not count a body that fails after the answer against its host).
 */
export type Admission = { go: true; answered(): void; settle(outcome: Outcome): void } | { go: false; down: HostDown }

export interface CircuitBreaker {
  /** Before a request to `url`. */
  admit(url: string): Admission
  /** Hosts found down and not back yet. */
  down(): HostDown[]
}

export interface BreakerEvents {
  onDown?(down: HostDown): void
  onBack?(host: string, downForMs: number): void
}

/** A probe admitted at `at` (ms); the object is its identity: a later probe replaces it. */
interface Probe {
  at: number
}

interface Open extends HostDown {
  probe?: Probe
}

/** The origin of a URL (no userinfo, path or query); an unparsable URL is its own host. */
export function hostOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return 'invalid-url'
  }
}

/**
 * A host found down and not asked for this many open periods after its probe was due is forgotten: nothing says
 * it is still down, and the upstream names any number of hosts (each would stay in memory and in the gauge of
 * hosts down for good). Asked again, it is tried as any host.
 */
export const FORGET_AFTER_PERIODS = 10

/**
 * `openMs`: how long a host found down is not asked. `probeMaxMs`: how long its probe may stay out before another
 * request may probe instead (a probe that waits for a place held forever must not keep its host down for good).
 */
export interface BreakerOptions extends BreakerEvents {
  openMs: number
  probeMaxMs: number
  now?: () => number
}

export function createCircuitBreaker(opts: BreakerOptions): CircuitBreaker {
  const now = opts.now ?? Date.now
  const open = new Map<string, Open>()
  const probing = (o: Open) => o.probe !== undefined && now() - o.probe.at < opts.probeMaxMs
  const forgotten = (o: Open) => !probing(o) && now() - o.retryAt!.getTime() >= FORGET_AFTER_PERIODS * opts.openMs
  const forgetStale = () => {
    for (const [host, o] of open) if (forgotten(o)) open.delete(host)
  }
  const snapshot = (o: Open): HostDown => {
    const { probe: _, ...down } = o
    return { ...down, retryAt: probing(o) ? undefined : o.retryAt }
  }

  /** `probe`: the request's own, if it was admitted as one; only the probe still out decides for its host. */
  function settle(host: string, probe: Probe | undefined, outcome: Outcome) {
    const o = open.get(host)
    const current = probe !== undefined && o?.probe === probe
    if (outcome === 'unknown') {
      if (current) o!.probe = undefined // the probe said nothing: the next request probes again
      return
    }
    if (outcome.up) {
      if (!o) return
      open.delete(host)
      opts.onBack?.(host, now() - o.since.getTime())
      return
    }
    const retryAt = new Date(now() + opts.openMs)
    if (o) {
      // Still down: the probe failed (another period), or a request sent before the host went down (or a probe
      // replaced by another) came back.
      if (current) Object.assign(o, { reason: outcome.reason, timedOut: outcome.timedOut, retryAt, probe: undefined })
      return
    }
    const down: Open = { host, since: new Date(now()), reason: outcome.reason, timedOut: outcome.timedOut, retryAt }
    forgetStale() // as a host goes down (rare, and after a wait on the network): never on a request's way
    open.set(host, down)
    opts.onDown?.(snapshot(down))
  }

  return {
    admit(url) {
      const host = hostOf(url)
      let o = open.get(host)
      if (o && forgotten(o)) {
        open.delete(host)
        o = undefined
      }
      if (o && (probing(o) || now() < o.retryAt!.getTime())) return { go: false, down: snapshot(o) }
      let probe = o ? (o.probe = { at: now() }) : undefined
      let settled = false
      return {
        go: true,
        answered() {
          if (settled || !probe) return
          settle(host, probe, { up: true }) // a probe replaced by another answering is the host back all the same
          probe = undefined
        },
        settle(outcome) {
          if (settled) return
          settled = true
          settle(host, probe, outcome)
        },
      }
    },
    down() {
      forgetStale()
      return [...open.values()].map(snapshot)
    },
  }
}
