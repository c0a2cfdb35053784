/** Builds zip and tar.gz archives in memory for tests and benchmarks (no binary fixtures committed), honest or lying. */
import { deflateRawSync, gzipSync } from 'node:zlib'

export interface FileSpec {
  name: string
  data?: string | Uint8Array
  /** Unix mode; 0o120777 makes a symbolic link. */
  mode?: number
}

/** Header fields of one zip entry, as the central directory or the local header states them. */
export interface ZipFields {
  name: string | Uint8Array
  method: number
  flags: number
  crc: number
  compressedSize: number
  size: number
}

/** A zip entry; `central` and `local` override what either header claims, `body` replaces the stored bytes. */
export interface ZipEntrySpec extends FileSpec {
  deflate?: boolean
  /** Host system in "version made by"; 3 (unix) by default, so `mode` counts. */
  madeBy?: number
  /** Sizes and CRC go in a data descriptor after the data (flag bit 3); the local header says 0. */
  descriptor?: boolean
  body?: Uint8Array
  centralExtra?: Uint8Array
  central?: Partial<ZipFields> & { offset?: number; externalAttributes?: number }
  local?: Partial<ZipFields>
}

export interface ZipLayout {
  entries: ZipEntrySpec[]
  /** More central directory records, pointing wherever they say (their `central.offset`, default 0). */
  extraCentral?: ZipEntrySpec[]
  /** Overrides of the end-of-central-directory record. */
  end?: { count?: number; cdOffset?: number; cdSize?: number }
}

const encoder = new TextEncoder()
const bytesOf = (d: string | Uint8Array | undefined) => (typeof d === 'string' ? encoder.encode(d) : (d ?? new Uint8Array()))

interface PreparedEntry {
  truth: ZipFields
  body: Uint8Array
  spec: ZipEntrySpec
}

function prepare(spec: ZipEntrySpec): PreparedEntry {
  const raw = bytesOf(spec.data)
  const method = spec.deflate === false ? 0 : 8
  const body = spec.body ?? (method === 8 ? deflateRawSync(raw) : raw)
  const flags = spec.descriptor ? 0x8 : 0
  return {
    spec,
    body,
    truth: { name: spec.name, method, flags, crc: Bun.hash.crc32(raw), compressedSize: body.byteLength, size: raw.byteLength },
  }
}

function localHeader(e: PreparedEntry): Uint8Array {
  const f = { ...e.truth, ...(e.spec.descriptor ? { crc: 0, compressedSize: 0, size: 0 } : {}), ...e.spec.local }
  const name = bytesOf(f.name)
  const h = new DataView(new ArrayBuffer(30))
  h.setUint32(0, 0x04034b50, true)
  h.setUint16(4, 20, true)
  h.setUint16(6, f.flags, true)
  h.setUint16(8, f.method, true)
  h.setUint32(14, f.crc >>> 0, true)
  h.setUint32(18, f.compressedSize, true)
  h.setUint32(22, f.size, true)
  h.setUint16(26, name.byteLength, true)
  return concat([new Uint8Array(h.buffer), name])
}

function dataDescriptor(e: PreparedEntry): Uint8Array {
  const d = new DataView(new ArrayBuffer(16))
  d.setUint32(0, 0x08074b50, true)
  d.setUint32(4, e.truth.crc >>> 0, true)
  d.setUint32(8, e.truth.compressedSize, true)
  d.setUint32(12, e.truth.size, true)
  return new Uint8Array(d.buffer)
}

function centralHeader(e: PreparedEntry, offset: number): Uint8Array {
  const f = { ...e.truth, ...e.spec.central }
  const name = bytesOf(f.name)
  const extra = e.spec.centralExtra ?? new Uint8Array()
  const h = new DataView(new ArrayBuffer(46))
  h.setUint32(0, 0x02014b50, true)
  h.setUint16(4, ((e.spec.madeBy ?? 3) << 8) | 20, true)
  h.setUint16(6, 20, true)
  h.setUint16(8, f.flags, true)
  h.setUint16(10, f.method, true)
  h.setUint32(16, f.crc >>> 0, true)
  h.setUint32(20, f.compressedSize, true)
  h.setUint32(24, f.size, true)
  h.setUint16(28, name.byteLength, true)
  h.setUint16(30, extra.byteLength, true)
  h.setUint32(38, f.externalAttributes ?? ((e.spec.mode ?? (e.spec.name.endsWith('/') ? 0o40755 : 0o100644)) << 16) >>> 0, true)
  h.setUint32(42, f.offset ?? offset, true)
  return concat([new Uint8Array(h.buffer), name, extra])
}

/** A zip laid out as stated: local headers and data in order, then the central directory and its end record. */
export function buildZip(layout: ZipLayout): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = []
  const centrals: Uint8Array[] = []
  let offset = 0
  for (const spec of layout.entries) {
    const e = prepare(spec)
    const local = localHeader(e)
    const descriptor = spec.descriptor ? dataDescriptor(e) : new Uint8Array()
    centrals.push(centralHeader(e, offset))
    parts.push(local, e.body, descriptor)
    offset += local.byteLength + e.body.byteLength + descriptor.byteLength
  }
  for (const spec of layout.extraCentral ?? []) centrals.push(centralHeader(prepare(spec), 0))
  const cd = concat(centrals)
  const end = new DataView(new ArrayBuffer(22))
  const count = layout.end?.count ?? centrals.length
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, Math.min(count, 0xffff), true)
  end.setUint16(10, Math.min(count, 0xffff), true)
  end.setUint32(12, layout.end?.cdSize ?? cd.byteLength, true)
  end.setUint32(16, layout.end?.cdOffset ?? offset, true)
  return concat([...parts, cd, new Uint8Array(end.buffer)])
}

export function makeZip(files: FileSpec[], opts: { deflate?: boolean } = {}): Uint8Array<ArrayBuffer> {
  return buildZip({ entries: files.map((f) => ({ ...f, deflate: opts.deflate })) })
}

/** A tar entry; the optional fields say how its name, type and size are spelled in the headers. */
export interface TarEntrySpec extends FileSpec {
  /** The typeflag character; by default '0' for files, '5' for names ending in '/', '2' for mode 0o120777. */
  type?: string
  /** The ustar prefix field (prepended to the name with a '/'). */
  prefix?: string
  linkname?: string
  /** A pax extended header ('x') before the entry, with these records. */
  pax?: Record<string, string>
  /** A GNU long name record ('L') before the entry. */
  gnuLongName?: string
  /** The size the header states, when it is not the data's. */
  declaredSize?: number
  /** 'gnu' writes the GNU magic (no prefix field). */
  magic?: 'ustar' | 'gnu'
}

function tarHeader(fields: { name: string; size: number; type: string; prefix?: string; linkname?: string; magic?: 'ustar' | 'gnu' }) {
  const header = new Uint8Array(512)
  const put = (s: string | Uint8Array, at: number, max: number) => header.set(bytesOf(s).subarray(0, max), at)
  put(fields.name, 0, 100)
  put('0000644\0', 100, 8)
  put('0000000\0', 108, 8)
  put('0000000\0', 116, 8)
  put(fields.size.toString(8).padStart(11, '0') + '\0', 124, 12)
  put('00000000000\0', 136, 12)
  put(fields.type, 156, 1)
  if (fields.linkname) put(fields.linkname, 157, 100)
  put(fields.magic === 'gnu' ? 'ustar  \0' : 'ustar\u000000', 257, 8)
  if (fields.prefix) put(fields.prefix, 345, 155)
  put('        ', 148, 8)
  const sum = header.reduce((a, b) => a + b, 0)
  put(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8)
  return header
}

const pad512 = (n: number) => new Uint8Array((512 - (n % 512)) % 512)

function paxRecords(records: Record<string, string>): Uint8Array {
  let text = ''
  for (const [key, value] of Object.entries(records)) {
    const body = ` ${key}=${value}\n`
    let length = encoder.encode(body).byteLength + 1
    while (String(length).length + encoder.encode(body).byteLength !== length) length++
    text += `${length}${body}`
  }
  return encoder.encode(text)
}

/** An uncompressed tar; `end: false` leaves out the two zero blocks that close it. */
export function makeTar(files: TarEntrySpec[], opts: { end?: boolean } = {}): Uint8Array<ArrayBuffer> {
  const blocks: Uint8Array[] = []
  const record = (type: string, data: Uint8Array, name: string) => {
    blocks.push(tarHeader({ name, size: data.byteLength, type }), data, pad512(data.byteLength))
  }
  for (const f of files) {
    if (f.pax) record('x', paxRecords(f.pax), 'PaxHeader')
    if (f.gnuLongName !== undefined) record('L', bytesOf(f.gnuLongName + '\0'), '././@LongLink')
    const data = bytesOf(f.data)
    const type = f.type ?? (f.mode === 0o120777 ? '2' : f.name.endsWith('/') ? '5' : '0')
    blocks.push(tarHeader({ ...f, type, size: f.declaredSize ?? data.byteLength }), data, pad512(data.byteLength))
  }
  if (opts.end !== false) blocks.push(new Uint8Array(1024))
  return concat(blocks)
}

export function makeTarGz(files: TarEntrySpec[]): Uint8Array<ArrayBuffer> {
  return new Uint8Array(gzipSync(makeTar(files)))
}

export function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

/** A small node pack whose __init__.py maps two host nodes. */
export function samplePack(extra: FileSpec[] = []): FileSpec[] {
  return [
    {
      name: '__init__.py',
      data: [
        'from .nodes import Blur, Sharpen',
        'NODE_CLASS_MAPPINGS = {',
        '    "ImageBlur": Blur,  # a comment with "quotes": here',
        "    'ImageSharpen': Sharpen,",
        '}',
        'NODE_DISPLAY_NAME_MAPPINGS = {"ImageBlur": "Blur"}',
      ].join('\n'),
    },
    { name: 'nodes.py', data: 'class Blur: pass\nclass Sharpen: pass\n' },
    { name: 'pyproject.toml', data: '[project]\nname = "sample"\n' },
    ...extra,
  ]
}

/** A sample pack's zip with `size` random bytes in it (random: every call is an archive of its own, which does not compress). */
export const randomPackZip = (size: number) =>
  makeZip(samplePack([{ name: 'model.bin', data: crypto.getRandomValues(new Uint8Array(size)) }]))
