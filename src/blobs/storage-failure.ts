/**
 * The object store's own words for a command run at a terminal. The server's 503 says "try again shortly", which
 * sends an operator to wait for a bucket that does not exist or a key that is wrong; the CLI commands hear the
 * underlying failure (createS3BlobStore's onError) and say it instead.
 */
import { AppError } from '../errors'

/** `err` with the store's failure in its message when it is the store's 503; otherwise `err` unchanged. */
export function withStorageWords(err: unknown, failure: Error | undefined): unknown {
  if (!failure || !(err instanceof AppError) || err.code !== 'storage_unavailable') return err
  const code = (failure as { code?: string }).code
  return new AppError(503, err.code, `the archive storage failed: ${code ? `${code}: ` : ''}${failure.message.replace(/\s+/g, ' ')}`)
}
