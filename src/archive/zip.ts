/** Reads a zip's central directory from disk (never the whole file) and hands selected entries to a visitor. */
import { inflateRawSync } from 'node:zlib'
import { type ArchiveEntry, type ArchiveLimits, ArchiveProblem, type EntryKind, type EntryVisitor } from './entries'

const EOCD = 0x06054b50
const ZIP64_LOCATOR = 0x07064b50
const ZIP64_EOCD = 0x06064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const MAX_CENTRAL_DIRECTORY = 64 * 1024 * 1024

interface Directory {
  count: number
  offset: number
  size: number
}

async function bytes(file: Blob, start: number, end: number): Promise<DataView> {
  const buf = await file.slice(start, end).arrayBuffer()
  if (buf.byteLength !== end - start) throw new ArchiveProblem('zip archive is truncated')
  return new DataView(buf)
}

async function findDirectory(file: Blob): Promise<Directory> {
  const tailStart = Math.max(0, file.size - 65_557)
  const tail = await bytes(file, tailStart, file.size)
  let at = -1
  for (let i = tail.byteLength - 22; i >= 0; i--) {
    if (tail.getUint32(i, true) === EOCD) {
      at = i
      break
    }
  }
  if (at < 0) throw new ArchiveProblem('not a zip archive: no end of central directory')
  if (tail.getUint16(at + 4, true) !== 0 || tail.getUint16(at + 6, true) !== 0) {
    throw new ArchiveProblem('multi-disk zip archives are not supported')
  }
  const dir = { count: tail.getUint16(at + 10, true), size: tail.getUint32(at + 12, true), offset: tail.getUint32(at + 16, true) }
  const needs64 = dir.count === 0xffff || dir.size === 0xffffffff || dir.offset === 0xffffffff
  if (!needs64) return dir
  const locAt = tailStart + at - 20
  const loc = await bytes(file, locAt, locAt + 20)
  if (loc.getUint32(0, true) !== ZIP64_LOCATOR) throw new ArchiveProblem('zip64 locator is missing')
  const eocd64At = Number(loc.getBigUint64(8, true))
  const e = await bytes(file, eocd64At, eocd64At + 56)
  if (e.getUint32(0, true) !== ZIP64_EOCD) throw new ArchiveProblem('zip64 end of central directory is missing')
  return { count: Number(e.getBigUint64(32, true)), size: Number(e.getBigUint64(40, true)), offset: Number(e.getBigUint64(48, true)) }
}

interface CentralEntry extends ArchiveEntry {
  method: number
  flags: number
  compressedSize: number
  localOffset: number
}

function zip64Extra(view: DataView, start: number, length: number, e: { size: number; compressedSize: number; localOffset: number }) {
  for (let p = start; p + 4 <= start + length;) {
    const id = view.getUint16(p, true)
    const len = view.getUint16(p + 2, true)
    if (id === 0x0001) {
      let q = p + 4
      const next = () => {
        const v = Number(view.getBigUint64(q, true))
        q += 8
        return v
      }
      if (e.size === 0xffffffff) e.size = next()
      if (e.compressedSize === 0xffffffff) e.compressedSize = next()
      if (e.localOffset === 0xffffffff) e.localOffset = next()
    }
    p += 4 + len
  }
}

function readCentral(view: DataView, count: number): CentralEntry[] {
  const out: CentralEntry[] = []
  const decoder = new TextDecoder()
  let p = 0
  for (let i = 0; i < count; i++) {
    if (p + 46 > view.byteLength || view.getUint32(p, true) !== CENTRAL) {
      throw new ArchiveProblem('zip central directory is corrupt')
    }
    const madeBy = view.getUint16(p + 4, true) >> 8
    const nameLen = view.getUint16(p + 28, true)
    const extraLen = view.getUint16(p + 30, true)
    const commentLen = view.getUint16(p + 32, true)
    const name = decoder.decode(new Uint8Array(view.buffer, view.byteOffset + p + 46, nameLen))
    const mode = view.getUint32(p + 38, true) >>> 16
    const kind: EntryKind = madeBy === 3 && (mode & 0xf000) === 0xa000 ? 'link' : name.endsWith('/') ? 'dir' : 'file'
    const entry: CentralEntry = {
      name,
      kind,
      flags: view.getUint16(p + 8, true),
      method: view.getUint16(p + 10, true),
      compressedSize: view.getUint32(p + 20, true),
      size: view.getUint32(p + 24, true),
      localOffset: view.getUint32(p + 42, true),
    }
    zip64Extra(view, p + 46 + nameLen, extraLen, entry)
    out.push(entry)
    p += 46 + nameLen + extraLen + commentLen
  }
  return out
}

async function readContent(file: Blob, e: CentralEntry, limits: ArchiveLimits): Promise<Uint8Array> {
  if (e.flags & 1) throw new ArchiveProblem(`archive entry "${e.name}" is encrypted`)
  const header = await bytes(file, e.localOffset, e.localOffset + 30)
  if (header.getUint32(0, true) !== LOCAL) throw new ArchiveProblem(`archive entry "${e.name}" is corrupt`)
  const start = e.localOffset + 30 + header.getUint16(26, true) + header.getUint16(28, true)
  const raw = new Uint8Array(await file.slice(start, start + e.compressedSize).arrayBuffer())
  if (e.method === 0) return raw
  if (e.method !== 8) throw new ArchiveProblem(`archive entry "${e.name}" uses unsupported compression method ${e.method}`)
  try {
    return inflateRawSync(raw, { maxOutputLength: limits.maxReadBytes })
  } catch {
    throw new ArchiveProblem(`archive entry "${e.name}" cannot be decompressed`)
  }
}

export async function walkZip(path: string, limits: ArchiveLimits, visitor: EntryVisitor): Promise<void> {
  const file = Bun.file(path)
  const dir = await findDirectory(file)
  if (dir.count > limits.maxEntries) {
    throw new ArchiveProblem(`archive has ${dir.count} entries; the limit is ${limits.maxEntries}`)
  }
  if (dir.size > MAX_CENTRAL_DIRECTORY || dir.offset + dir.size > file.size) {
    throw new ArchiveProblem('zip central directory is corrupt')
  }
  const entries = readCentral(await bytes(file, dir.offset, dir.offset + dir.size), dir.count)
  for (const e of entries) {
    const entry = { name: e.name, size: e.size, kind: e.kind }
    const wanted = e.kind === 'file' && e.size <= limits.maxReadBytes && visitor.wants(entry)
    visitor.visit(entry, wanted ? await readContent(file, e, limits) : undefined)
  }
}
