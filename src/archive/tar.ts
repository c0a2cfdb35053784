/** Streams a .tar.gz through gunzip and hands selected entries to a visitor; memory stays bounded. */
import { createReadStream } from 'node:fs'
import { createGunzip } from 'node:zlib'
import { type ArchiveLimits, ArchiveProblem, type EntryKind, type EntryVisitor } from './entries'

/** Reads exact byte counts from an async stream of chunks. */
class ByteReader {
  private buffered: Uint8Array[] = []
  private length = 0
  constructor(private readonly source: AsyncIterator<Uint8Array>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.length < n) {
      const next = await this.source.next()
      if (next.done) return false
      this.buffered.push(next.value)
      this.length += next.value.byteLength
    }
    return true
  }

  /** Exactly n bytes, or undefined at the end of the stream. */
  async read(n: number): Promise<Uint8Array | undefined> {
    if (!(await this.fill(n))) return undefined
    const out = new Uint8Array(n)
    let filled = 0
    while (filled < n) {
      const head = this.buffered[0]!
      const take = Math.min(head.byteLength, n - filled)
      out.set(head.subarray(0, take), filled)
      filled += take
      if (take === head.byteLength) this.buffered.shift()
      else this.buffered[0] = head.subarray(take)
    }
    this.length -= n
    return out
  }

  async skip(n: number): Promise<void> {
    for (let left = n; left > 0;) {
      const step = Math.min(left, 1 << 20)
      if (!(await this.read(step))) throw new ArchiveProblem('tar archive is truncated')
      left -= step
    }
  }
}

const text = (b: Uint8Array) => new TextDecoder().decode(b.subarray(0, b.indexOf(0) < 0 ? b.length : b.indexOf(0)))

function octal(b: Uint8Array): number {
  if (b[0]! & 0x80) {
    let n = 0
    for (let i = 1; i < b.length; i++) n = n * 256 + b[i]!
    return n
  }
  const s = text(b).trim()
  const n = s ? parseInt(s, 8) : 0
  if (!Number.isFinite(n)) throw new ArchiveProblem('tar header is corrupt')
  return n
}

function paxPath(record: Uint8Array): string | undefined {
  const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(new TextDecoder().decode(record))
  return m?.[1]
}

const KINDS: Record<string, EntryKind> = { '0': 'file', '\0': 'file', '7': 'file', '5': 'dir', '1': 'link', '2': 'link' }

export async function walkTarGz(path: string, limits: ArchiveLimits, visitor: EntryVisitor): Promise<void> {
  const gunzip = createReadStream(path).pipe(createGunzip())
  const reader = new ByteReader(gunzip[Symbol.asyncIterator]())
  let longName: string | undefined
  let count = 0
  let total = 0
  try {
    for (;;) {
      const header = await reader.read(512)
      if (!header || header.every((b) => b === 0)) return
      const size = octal(header.subarray(124, 136))
      const padded = Math.ceil(size / 512) * 512
      const type = String.fromCharCode(header[156]!)
      if (type === 'L' || type === 'x') {
        const record = await reader.read(padded)
        if (!record) throw new ArchiveProblem('tar archive is truncated')
        longName = type === 'L' ? text(record.subarray(0, size)) : (paxPath(record.subarray(0, size)) ?? longName)
        continue
      }
      if (type === 'g') {
        await reader.skip(padded)
        continue
      }
      const prefix = text(header.subarray(345, 500))
      const name = longName ?? (prefix ? `${prefix}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)))
      longName = undefined
      if (++count > limits.maxEntries) throw new ArchiveProblem(`archive has more than ${limits.maxEntries} entries`)
      total += size
      if (total > limits.maxTotalBytes) throw new ArchiveProblem(`archive expands beyond ${limits.maxTotalBytes} bytes`)
      const entry = { name, size, kind: KINDS[type] ?? 'other' }
      if (entry.kind === 'file' && size <= limits.maxReadBytes && visitor.wants(entry)) {
        const content = await reader.read(padded)
        if (!content) throw new ArchiveProblem('tar archive is truncated')
        visitor.visit(entry, content.subarray(0, size))
      } else {
        visitor.visit(entry)
        await reader.skip(padded)
      }
    }
  } catch (err) {
    if (err instanceof ArchiveProblem) throw err
    throw new ArchiveProblem('not a valid tar.gz archive')
  } finally {
    gunzip.destroy()
  }
}
