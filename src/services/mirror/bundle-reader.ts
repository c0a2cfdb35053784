/**
 * Reading a bundle's tar, member by member: a member named twice, a link or a directory is refused; input that
 * is no tar, or is cut short, or never ends (/dev/zero) becomes one line; a stop signal abandons the read at once.
 */
import { Transform } from 'node:stream'
import tar from 'tar-stream'

export class BundleError extends Error {
  /** Set when the bundle holds nothing new for this registry (not a failure). */
  nothingToDo = false
}

/** What a stopped import says (SIGTERM, SIGINT), with what became of the registry. */
export class ImportStopped extends BundleError {}

/**
 * Bytes read that no member accounts for (its header and padded data): the end-of-archive blocks, a tar tool's
 * padding to its record size, pax records. Past this the input is filler without end (tar-stream reads blocks of
 * zeros as "no header" and goes on for ever), not a bundle.
 */
const OUTSIDE_MEMBERS_ALLOWANCE = 16 * 1024 * 1024

const padded = (size: number) => Math.ceil(size / 512) * 512

/** A member: its header, and its bytes as they are read. */
export type Member = ReturnType<typeof tar.extract> extends AsyncIterable<infer S> ? S & AsyncIterable<Uint8Array> : never

/** Each member of the tar, in order (the caller reads or drains each before asking for the next). */
export async function* members(open: () => NodeJS.ReadableStream, signal?: AbortSignal): AsyncGenerator<Member> {
  if (signal?.aborted) throw new ImportStopped('the import was stopped before anything was applied')
  const extract = tar.extract()
  const source = open()
  let read = 0
  let accounted = 0
  const meter = new Transform({
    transform(chunk: Uint8Array, _encoding, callback) {
      read += chunk.byteLength
      if (read - accounted > OUTSIDE_MEMBERS_ALLOWANCE)
        callback(new BundleError(`not a registry-mirror bundle: more than ${OUTSIDE_MEMBERS_ALLOWANCE} bytes are outside its members`))
      else callback(null, chunk)
    },
  })
  const fail = (err: Error) => extract.destroy(err)
  source.on('error', fail)
  meter.on('error', fail)
  // Destroying the reader also fails the member being read, so that a staged archive is removed on the way out.
  const stop = () => fail(new ImportStopped('the import was stopped before anything was applied'))
  signal?.addEventListener('abort', stop, { once: true })
  source.pipe(meter).pipe(extract as unknown as NodeJS.WritableStream)
  const seen = new Set<string>()
  try {
    for await (const raw of extract) {
      const entry = raw as Member
      const { name, type, size = 0 } = entry.header
      accounted += 512 + padded(size)
      if (type !== 'file') throw new BundleError(`the bundle holds a ${type} (${name}); only files belong in it`)
      // Only one of two members of one name would be checked, or both applied: neither is what an export writes.
      if (seen.has(name)) throw new BundleError(`the bundle holds "${name}" twice; the bundle is damaged`)
      seen.add(name)
      yield entry
    }
  } catch (err) {
    throw asBundleError(err)
  } finally {
    signal?.removeEventListener('abort', stop)
    ;(source as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.()
    extract.destroy()
  }
}

/**
 * A failure while reading the bundle, in one line. The tar reader's own words on bytes that are no tar (a zip,
 * random bytes, a file cut short) say so; a file that cannot be read keeps its code (the command says which file),
 * and a refusal of ours (a BundleError, an archive over the upload limit) its words.
 */
export function asBundleError(err: unknown): unknown {
  if (err instanceof BundleError || (err as { code?: unknown }).code !== undefined) return err
  const message = (err as Error).message ?? String(err)
  if (message === 'Unexpected end of data') return new BundleError('not a registry-mirror bundle: it is cut short (unexpected end of data)')
  return new BundleError(`not a registry-mirror bundle: ${message.slice(0, 200)}`)
}
