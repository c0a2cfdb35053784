/**
 * Polls of one video task share the provider's answer: the host application polls a task every 5 s, but nothing
 * stops a caller from polling it as fast as it can, and each poll would be a request to the provider on the
 * operator's key (whose own rate limit then refuses every caller's tasks). A poll while another of the same task is
 * in flight, or within `reuseMs` of its answer, gets that answer. Kept per process: with several instances the
 * provider hears a task at most once per instance per window.
 */
import type { ProviderCreations } from '../upstream/video-provider'

/** The provider's answer for `taskId`, asked of it through `ask` only when no recent one is held. */
export type SharedPolls = (taskId: string, nowMs: number, ask: () => Promise<ProviderCreations>) => Promise<ProviderCreations>

/** How long a task's answer is reused: well under the host application's 5 s between polls. */
export const POLL_REUSE_MS = 2_000

export function createSharedPolls(reuseMs = POLL_REUSE_MS): SharedPolls {
  const recent = new Map<string, { askedAt: number; answer: Promise<ProviderCreations> }>()
  return (taskId, nowMs, ask) => {
    const held = recent.get(taskId)
    if (held && nowMs - held.askedAt < reuseMs && nowMs >= held.askedAt) return held.answer
    // Entries live `reuseMs`: those past it go whenever the map grows, so it holds about a window's tasks.
    if (recent.size >= 1_000) for (const [id, e] of recent) if (nowMs - e.askedAt >= reuseMs) recent.delete(id)
    const answer = ask()
    const entry = { askedAt: nowMs, answer }
    recent.set(taskId, entry)
    // A failed answer is not kept: the next poll asks again (the provider's error is each caller's own to see).
    answer.catch(() => recent.get(taskId) === entry && recent.delete(taskId))
    return answer
  }
}
