/**
 * The breaker's admissions of one request, one for each host it is sent to: its own, then each redirect's target
 * (an archive's URL may lead to a storage host or a CDN). Each host answers for what it did itself: a target that
 * fails is the one found down, and the host that redirected to it answered, so it is up.
 */
import { hostOf, type Admission, type CircuitBreaker, type HostDown, type Outcome } from './circuit-breaker'

type Admitted = Extract<Admission, { go: true }>

export interface RequestHosts {
  /** Before asking `url`: the reason not to when its host is known down (once per host per request). */
  admit(url: string): HostDown | undefined
  /** `url`'s host answered: a redirect, or the headers of the reply. */
  answered(url: string): void
  /**
   * The request ended: the host whose failure ended it (if it failed) gets `outcome`; every other host that
   * answered is up, and one that did not says nothing.
   */
  settle(failure?: { host: string; outcome: Outcome }): void
}

export function requestHosts(breaker: CircuitBreaker | undefined): RequestHosts {
  const admitted = new Map<string, { admission: Admitted; answered: boolean }>()
  return {
    admit(url) {
      const host = hostOf(url)
      if (!breaker || admitted.has(host)) return undefined
      const admission = breaker.admit(url)
      if (!admission.go) return admission.down
      admitted.set(host, { admission, answered: false })
      return undefined
    },
    answered(url) {
      const a = admitted.get(hostOf(url))
      if (!a) return
      a.answered = true
      a.admission.answered()
    },
    settle(failure) {
      for (const [host, a] of admitted) {
        if (host === failure?.host) a.admission.settle(failure.outcome)
        else a.admission.settle(a.answered ? { up: true } : 'unknown')
      }
    },
  }
}
