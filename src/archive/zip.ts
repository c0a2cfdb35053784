/**
 * Walks a zip: yauzl parses the end record and the central directory, and this module refuses every layout
 * that could make reading it cost more than the file itself: entries outside the file, overlapping each other,
 * or whose local header tells another story; then it inflates the wanted entries with an output cap, and every
 * other file entry a piece at a time, so that no entry's size or CRC-32 goes unchecked.
 */
import { close, fstat, open } from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import { crc32, createInflateRaw, inflateRawSync } from 'node:zlib'
import yauzl from 'yauzl'
import type { InspectionBudget } from './budget'
import { type ArchiveEntry, type ArchiveLimits, ArchiveProblem, type EntryKind, type EntryVisitor, quoteName } from './entries'
import { checkCentralRecord, localHeaderMismatch } from './zip-headers'
import { ZipFileReader } from './zip-reader'

/** Real central directories are a few MiB at 20,000 entries; records are kept in memory until the layout is checked. */
const MAX_CENTRAL_DIRECTORY = 32 * 1024 * 1024
const CENTRAL_RECORD_FIXED = 46
const LOCAL_HEADER_FIXED = 30

interface CentralRecord {
  entry: yauzl.Entry
  name: string
  kind: EntryKind
}

function asProblem(err: unknown, context = 'not a valid zip archive'): ArchiveProblem {
  if (err instanceof ArchiveProblem) return err
  const message = err instanceof Error ? err.message : String(err)
  return new ArchiveProblem(`${context}: ${message.slice(0, 200)}`)
}

async function readCentralDirectory(zip: yauzl.ZipFile, limits: ArchiveLimits, budget: InspectionBudget): Promise<CentralRecord[]> {
  if (zip.entryCount > limits.maxEntries) {
    throw new ArchiveProblem(`archive has ${zip.entryCount} entries; the limit is ${limits.maxEntries}`)
  }
  const records: CentralRecord[] = []
  let directoryBytes = 0
  let declared = 0
  for await (const entry of zip.eachEntry()) {
    budget.checkTime()
    directoryBytes += CENTRAL_RECORD_FIXED + entry.fileNameLength + entry.extraFieldLength + entry.fileCommentLength
    if (directoryBytes > MAX_CENTRAL_DIRECTORY)
      throw new ArchiveProblem(`zip central directory is larger than ${MAX_CENTRAL_DIRECTORY} bytes`)
    records.push({ entry, ...checkCentralRecord(entry) })
    declared += entry.uncompressedSize
    if (declared > limits.maxTotalBytes) throw new ArchiveProblem(`archive expands beyond ${limits.maxTotalBytes} bytes`)
  }
  return records
}

/** Deflate never grows data by more than a few bytes per 16 KiB block; anything larger is not what the header says. */
const largestCompressed = (size: number) => size + Math.ceil(size / 1024) + 1024

function checkCompressedSize({ entry, name }: CentralRecord): void {
  if (entry.compressedSize > largestCompressed(entry.uncompressedSize)) {
    throw new ArchiveProblem(
      `zip entry ${quoteName(name)} is ${entry.compressedSize} bytes compressed, more than ${entry.uncompressedSize} bytes could take`,
    )
  }
}

function inflateProblem({ name }: CentralRecord, err: unknown): ArchiveProblem {
  if (err instanceof ArchiveProblem) return err
  const tooLarge = err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
  return new ArchiveProblem(`zip entry ${quoteName(name)} ${tooLarge ? 'inflates beyond its declared size' : 'cannot be decompressed'}`)
}

/** The entry's bytes as inflated come to its declared size and CRC-32. */
function checkSum({ entry, name }: CentralRecord, bytes: number, crc: number): void {
  const quoted = quoteName(name)
  if (bytes !== entry.uncompressedSize) {
    throw new ArchiveProblem(`zip entry ${quoted} holds ${bytes} bytes, not the ${entry.uncompressedSize} its header states`)
  }
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new ArchiveProblem(`zip entry ${quoted} fails its CRC-32 check`)
}

/** The entry's bytes, inflated in one call with its declared size as the cap, and checked against size and CRC-32. */
async function readContent(reader: ZipFileReader, record: CentralRecord, dataStart: number, budget: InspectionBudget): Promise<Uint8Array> {
  const { entry } = record
  checkCompressedSize(record)
  const raw = await reader.readExactly(dataStart, entry.compressedSize)
  let content: Uint8Array = raw
  if (entry.compressionMethod !== 0) {
    try {
      content = inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.uncompressedSize) })
    } catch (err) {
      throw inflateProblem(record, err)
    }
    budget.inflated(content.byteLength)
  }
  checkSum(record, content.byteLength, crc32(content))
  return content
}

/** Compressed bytes an entry not read for its content is checked a piece of at a time. */
const CHECK_PIECE = 1024 * 1024

/**
 * An entry not read for its content (not Python, or larger than is read), checked as readContent checks one: its
 * bytes inflated a piece at a time, counted, summed and let go, never held whole. Without this, an entry that lies
 * about its size or cannot be inflated at all was taken, and installers were handed an archive that does not unpack.
 */
async function checkContent(reader: ZipFileReader, record: CentralRecord, dataStart: number, budget: InspectionBudget): Promise<void> {
  const { entry } = record
  checkCompressedSize(record)
  let bytes = 0
  let crc = 0
  const take = (piece: Uint8Array) => {
    budget.checkTime()
    bytes += piece.byteLength
    if (bytes > entry.uncompressedSize) throw new ArchiveProblem(`zip entry ${quoteName(record.name)} inflates beyond its declared size`)
    crc = crc32(piece, crc)
  }
  async function* raw() {
    for (let at = 0; at < entry.compressedSize; at += CHECK_PIECE) {
      yield await reader.readExactly(dataStart + at, Math.min(CHECK_PIECE, entry.compressedSize - at))
    }
  }
  if (entry.compressionMethod === 0) {
    for await (const piece of raw()) take(piece)
  } else {
    try {
      await pipeline(Readable.from(raw()), createInflateRaw(), async (inflated: AsyncIterable<Buffer>) => {
        for await (const piece of inflated) {
          take(piece)
          budget.inflated(piece.byteLength)
        }
      })
    } catch (err) {
      throw inflateProblem(record, err)
    }
  }
  checkSum(record, bytes, crc)
}

/**
 * Visits the entries in file order. Each entry's range (local header and data) must end before the next one
 * starts and inside the file; that is checked from the central directory before the local header is read, and
 * again with the local header's real length, so no byte of the file is read for two entries.
 */
async function visitEntries(
  zip: yauzl.ZipFile,
  reader: ZipFileReader,
  records: CentralRecord[],
  limits: ArchiveLimits,
  visitor: EntryVisitor,
  budget: InspectionBudget,
): Promise<void> {
  const offset = (r: CentralRecord) => r.entry.relativeOffsetOfLocalHeader
  records.sort((a, b) => offset(a) - offset(b))
  for (let i = 0; i < records.length; i++) {
    budget.checkTime()
    const record = records[i]!
    const next = records[i + 1]
    const { entry } = record
    const checkEnd = (end: number) => {
      if (end > reader.size) throw new ArchiveProblem(`zip entry ${quoteName(record.name)} lies outside the file`)
      if (next && end > offset(next)) throw new ArchiveProblem(`zip entries ${quoteName(record.name)} and ${quoteName(next.name)} overlap`)
    }
    checkEnd(offset(record) + LOCAL_HEADER_FIXED + entry.fileNameLength + entry.compressedSize)
    let local: yauzl.LocalFileHeader
    try {
      local = await zip.readLocalFileHeaderPromise(entry)
    } catch (err) {
      throw asProblem(err, `zip entry ${quoteName(record.name)}`)
    }
    checkEnd(local.fileDataStart + entry.compressedSize)
    const mismatch = localHeaderMismatch(entry, local)
    if (mismatch) {
      throw new ArchiveProblem(`zip entry ${quoteName(record.name)}: its local header disagrees with the central directory (${mismatch})`)
    }
    const visited: ArchiveEntry = { name: record.name, size: entry.uncompressedSize, kind: record.kind }
    const wanted = record.kind === 'file' && entry.uncompressedSize <= limits.maxReadBytes && visitor.wants(visited)
    if (record.kind === 'file' && !wanted) await checkContent(reader, record, local.fileDataStart, budget)
    visitor.visit(visited, wanted ? await readContent(reader, record, local.fileDataStart, budget) : undefined)
  }
}

export async function walkZip(path: string, limits: ArchiveLimits, visitor: EntryVisitor, budget: InspectionBudget): Promise<void> {
  const fd = await promisify(open)(path, 'r')
  const { size } = await promisify(fstat)(fd)
  const reader = new ZipFileReader(fd, size, budget)
  let zip: yauzl.ZipFile
  try {
    // Names stay raw bytes so that every check sees exactly what is stored; sizes of stored entries are validated.
    zip = await yauzl.fromRandomAccessReaderPromise(reader, size, { decodeStrings: false, validateEntrySizes: true, autoClose: false })
  } catch (err) {
    close(fd)
    throw asProblem(err)
  }
  try {
    const records = await readCentralDirectory(zip, limits, budget)
    await visitEntries(zip, reader, records, limits, visitor, budget)
  } catch (err) {
    throw asProblem(err)
  } finally {
    // Releases yauzl's hold on the reader, which then closes the file.
    zip.close()
  }
}
