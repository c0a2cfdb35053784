/**
 * Frees the claim of a failed upload, so that a retry of its still valid URL is taken. The failure is often the
 * database going away (503 database_unavailable, Retry-After: 5), and then the release fails too: the claim stayed,
 * and every retry the 503 asked for was 409 upload_in_progress until the claim went two minutes unrenewed. Such a
 * release is tried again every second until it works or, after those two minutes, a retry could take the claim over
 * anyway. Only the claim as this upload wrote it is deleted (releaseUpload), never one another upload took over.
 */
import { releaseUpload } from '../store/uploads'
import type { Deps } from './deps'
import { inWriteTurn } from './write-turn'

export const RELEASE_RETRY_MS = 1_000

export async function releaseClaim(
  deps: Pick<Deps, 'db' | 'log'>,
  versionId: string,
  stamps: readonly string[],
  opts: { retryMs?: number; giveUpAfterMs?: number } = {},
): Promise<void> {
  const { retryMs = RELEASE_RETRY_MS, giveUpAfterMs = 2 * 60_000 } = opts
  const release = () => inWriteTurn(deps.db, () => releaseUpload(deps.db, versionId, stamps))
  try {
    await release()
    return
  } catch (err) {
    deps.log.warn('upload.claim_release_failed', { version: versionId, error: (err as Error).message })
  }
  const giveUpAt = Date.now() + giveUpAfterMs
  const again = () => {
    const timer = setTimeout(() => {
      release().then(
        () => deps.log.info('upload.claim_released', { version: versionId }),
        () => (Date.now() < giveUpAt ? again() : undefined),
      )
    }, retryMs)
    timer.unref?.()
  }
  again()
}
