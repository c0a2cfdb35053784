/** Checks on one zip entry's headers as yauzl parsed them: what the central directory states, and whether the local header agrees. */
import yauzl from 'yauzl'
import { ArchiveProblem, checkEntryName, type EntryKind, quoteName } from './entries'

const FLAG_ENCRYPTED = 0x1
const FLAG_DATA_DESCRIPTOR = 0x8
const FLAG_UTF8 = 0x800
/** Flags that change how an entry's bytes or name are read; the two headers must agree on them. */
const COMPARED_FLAGS = FLAG_ENCRYPTED | FLAG_DATA_DESCRIPTOR | FLAG_UTF8
const METHOD_STORED = 0
const METHOD_DEFLATED = 8
const EXTRA_ZIP64 = 0x0001
/** Info-ZIP Unicode Path: some extractors take the name from here instead of the header. */
const EXTRA_UNICODE_PATH = 0x7075
const MODE_TYPE = 0o170000
const MODE_REGULAR = 0o100000
const MODE_DIRECTORY = 0o040000
const MODE_SYMLINK = 0o120000

const utf8 = new TextDecoder()

/** The entry's name and kind, or an ArchiveProblem saying why the central directory record is refused. */
export function checkCentralRecord(entry: yauzl.Entry): { name: string; kind: EntryKind } {
  // Traversal is spelled in ASCII, which UTF-8 and CP437 decode alike; UTF-8 keeps the name readable in reasons.
  const name = utf8.decode(entry.fileNameRaw)
  checkEntryName(name)
  for (const field of entry.extraFields) {
    if (field.id === EXTRA_UNICODE_PATH && field.data.length > 5) checkEntryName(utf8.decode(field.data.subarray(5)), 'unicode path field')
  }
  const quoted = quoteName(name)
  if (entry.generalPurposeBitFlag & FLAG_ENCRYPTED) throw new ArchiveProblem(`zip entry ${quoted} is encrypted`)
  const method = entry.compressionMethod
  if (method !== METHOD_STORED && method !== METHOD_DEFLATED) {
    throw new ArchiveProblem(`zip entry ${quoted} uses unsupported compression method ${method}`)
  }
  // Unix modes sit in the high half of the external attributes; other hosts leave it zero.
  const type = (entry.externalFileAttributes >>> 16) & MODE_TYPE
  if (type === MODE_SYMLINK) throw new ArchiveProblem(`archive entry ${quoted} is a symbolic link; links are not allowed`)
  if (type !== 0 && type !== MODE_REGULAR && type !== MODE_DIRECTORY) {
    throw new ArchiveProblem(`archive entry ${quoted} is a device, FIFO or socket; only regular files and directories are allowed`)
  }
  return { name, kind: name.endsWith('/') || type === MODE_DIRECTORY ? 'dir' : 'file' }
}

/** The local header's sizes, read from its zip64 extra field where the 32-bit fields say so. */
function localSizes(local: yauzl.LocalFileHeader): { compressed: number; uncompressed: number } {
  const sizes = { compressed: local.compressedSize, uncompressed: local.uncompressedSize }
  if (sizes.compressed !== 0xffffffff && sizes.uncompressed !== 0xffffffff) return sizes
  const zip64 = yauzl.parseExtraFields(local.extraField).find((f) => f.id === EXTRA_ZIP64)
  // In a local header the zip64 field holds both sizes, uncompressed first.
  if (!zip64 || zip64.data.length < 16) return { compressed: NaN, uncompressed: NaN }
  return { uncompressed: Number(zip64.data.readBigUInt64LE(0)), compressed: Number(zip64.data.readBigUInt64LE(8)) }
}

/** The first field on which the local header contradicts the central directory, if any. */
export function localHeaderMismatch(entry: yauzl.Entry, local: yauzl.LocalFileHeader): string | undefined {
  if (!local.fileName.equals(entry.fileNameRaw)) return 'name'
  if (local.compressionMethod !== entry.compressionMethod) return 'compression method'
  if ((local.generalPurposeBitFlag ^ entry.generalPurposeBitFlag) & COMPARED_FLAGS) return 'flags'
  // With a data descriptor the local header may leave sizes and CRC at zero; it may not state other values.
  const deferred = (local.generalPurposeBitFlag & FLAG_DATA_DESCRIPTOR) !== 0
  const agrees = (stated: number, central: number) => stated === central || (deferred && stated === 0)
  const sizes = localSizes(local)
  if (!agrees(sizes.compressed, entry.compressedSize) || !agrees(sizes.uncompressed, entry.uncompressedSize)) return 'sizes'
  if (!agrees(local.crc32, entry.crc32)) return 'CRC-32'
  return undefined
}
