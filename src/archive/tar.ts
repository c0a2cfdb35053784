/**
 * Walks a .tar.gz with tar-stream: only regular files and directories pass, every name field an extractor may use
 * is checked, and decompression stops once it runs past what the entries account for.
 */
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import tar from 'tar-stream'
import type { InspectionBudget } from './budget'
import {
  type ArchiveEntry,
  type ArchiveLimits,
  ArchiveProblem,
  checkEntryName,
  type EntryKind,
  type EntryVisitor,
  quoteName,
} from './entries'

/** Measured: gunzip with Node's default 16 KiB chunks runs 4x slower under Bun than with 256 KiB. */
const CHUNK = 256 * 1024
/**
 * Decompressed bytes not covered by an entry (its header and padded data): pax and GNU long-name records,
 * the end-of-archive blocks, what is in flight between streams. Past this, the stream is filler (a gzip of
 * zeros after the last entry, records without end) and reading on would only burn the budget.
 */
const OUTSIDE_ENTRIES_ALLOWANCE = 16 * 1024 * 1024
/** tar-stream's own cap on one pax or GNU long-name record, which it buffers whole. */
const RECORD_CAP = '4 MiB'

const KINDS: Partial<Record<string, EntryKind>> = { file: 'file', 'contiguous-file': 'file', directory: 'dir' }
const REFUSED_KINDS: Partial<Record<string, string>> = {
  link: 'a hard link',
  symlink: 'a symbolic link',
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a FIFO',
}

const padded = (size: number) => Math.ceil(size / 512) * 512

/** What tar-stream reports: its types omit that `type` is null for a typeflag it does not know, and what `pax` holds. */
type Header = Omit<tar.Header, 'type' | 'pax'> & { type: string | null; pax?: Partial<Record<string, string>> | null }

/**
 * The entry's kind, after checking every field that names it. tar-stream applies the ustar prefix, a pax path
 * or a GNU long name to `name`, so checking it checks whichever of them the entry uses; pax records are also
 * checked as written.
 */
function checkHeader(header: Header): EntryKind {
  checkEntryName(header.name)
  if (header.pax?.path !== undefined) checkEntryName(header.pax.path, 'pax path')
  if (header.pax?.linkpath !== undefined) checkEntryName(header.pax.linkpath, 'pax linkpath')
  const quoted = quoteName(header.name)
  const kind = KINDS[header.type ?? '']
  if (!kind) {
    const refused = REFUSED_KINDS[header.type ?? ''] ?? 'of an unknown type'
    const what = refused.includes('link')
      ? `${refused}; links are not allowed`
      : `${refused}; only regular files and directories are allowed`
    throw new ArchiveProblem(`archive entry ${quoted} is ${what}`)
  }
  // tar-stream reads a directory's data as the next headers; an extractor would skip it. Neither is what a pack means.
  if (kind === 'dir' && header.size > 0) throw new ArchiveProblem(`tar directory entry ${quoted} carries ${header.size} bytes of data`)
  return kind
}

function asProblem(err: unknown): ArchiveProblem {
  if (err instanceof ArchiveProblem) return err
  const { message = String(err), code = '' } = err as { message?: string; code?: string }
  if (code.startsWith('Z_'))
    return new ArchiveProblem(/unexpected end/i.test(message) ? 'tar.gz archive is truncated' : 'not a valid gzip stream')
  if (message === 'Unexpected end of data') return new ArchiveProblem('tar archive is truncated')
  if (message === 'Header exceeds max size') return new ArchiveProblem(`tar archive has a pax or long-name record over ${RECORD_CAP}`)
  if (/^Invalid (tar )?header/.test(message)) return new ArchiveProblem('tar archive has a corrupt header')
  return new ArchiveProblem(`not a valid tar.gz archive: ${message.slice(0, 200)}`)
}

/** tar-stream's entry streams yield Buffers, which its types leave as unknown. */
async function readBody(entry: AsyncIterable<unknown>, size: number): Promise<Uint8Array> {
  const content = new Uint8Array(size)
  let at = 0
  for await (const chunk of entry as AsyncIterable<Uint8Array>) {
    content.set(chunk, at)
    at += chunk.byteLength
  }
  return content
}

export async function walkTarGz(path: string, limits: ArchiveLimits, visitor: EntryVisitor, budget: InspectionBudget): Promise<void> {
  // The compressed file is read once, front to back.
  budget.read((await stat(path)).size)
  let decompressed = 0
  let accounted = 0
  const meter = new Transform({
    transform(chunk: Uint8Array, _encoding, callback) {
      decompressed += chunk.byteLength
      try {
        budget.inflated(chunk.byteLength)
        if (decompressed - accounted > OUTSIDE_ENTRIES_ALLOWANCE) {
          throw new ArchiveProblem(`tar archive holds more than ${OUTSIDE_ENTRIES_ALLOWANCE} bytes outside its entries`)
        }
        callback(null, chunk)
      } catch (err) {
        callback(err as Error)
      }
    },
  })
  const extract = tar.extract()
  const flowing = pipeline(createReadStream(path, { highWaterMark: CHUNK }), createGunzip({ chunkSize: CHUNK }), meter, extract)
  // Its failure also ends the iteration below, which reports it; this only keeps it from going unhandled.
  flowing.catch(() => {})
  let count = 0
  let total = 0
  try {
    for await (const entry of extract) {
      budget.checkTime()
      const header = entry.header as Header
      const size = header.size
      accounted += 512 + padded(size)
      const kind = checkHeader(header)
      if (++count > limits.maxEntries) throw new ArchiveProblem(`archive has more than ${limits.maxEntries} entries`)
      total += size
      if (total > limits.maxTotalBytes) throw new ArchiveProblem(`archive expands beyond ${limits.maxTotalBytes} bytes`)
      const visited: ArchiveEntry = { name: header.name, size, kind }
      if (kind === 'file' && size <= limits.maxReadBytes && visitor.wants(visited)) {
        visitor.visit(visited, await readBody(entry, size))
      } else {
        visitor.visit(visited)
        entry.resume()
      }
    }
    await flowing
  } catch (err) {
    throw asProblem(err)
  } finally {
    extract.destroy()
  }
}
