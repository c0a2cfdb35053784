/** Builds zip and tar.gz archives in memory for tests and benchmarks (no binary fixtures committed). */
import { deflateRawSync, gzipSync } from 'node:zlib'

export interface FileSpec {
  name: string
  data?: string | Uint8Array
  /** Unix mode; 0o120777 makes a symbolic link. */
  mode?: number
}

const bytesOf = (d: string | Uint8Array | undefined) => (typeof d === 'string' ? new TextEncoder().encode(d) : (d ?? new Uint8Array()))

export function makeZip(files: FileSpec[], opts: { deflate?: boolean } = {}): Uint8Array<ArrayBuffer> {
  const locals: Uint8Array[] = []
  const centrals: Uint8Array[] = []
  let offset = 0
  for (const f of files) {
    const name = new TextEncoder().encode(f.name)
    const raw = bytesOf(f.data)
    const method = opts.deflate === false ? 0 : 8
    const body = method === 8 ? deflateRawSync(raw) : raw
    const crc = Bun.hash.crc32(raw)
    const local = new DataView(new ArrayBuffer(30))
    local.setUint32(0, 0x04034b50, true)
    local.setUint16(4, 20, true)
    local.setUint16(8, method, true)
    local.setUint32(14, crc, true)
    local.setUint32(18, body.byteLength, true)
    local.setUint32(22, raw.byteLength, true)
    local.setUint16(26, name.byteLength, true)
    const central = new DataView(new ArrayBuffer(46))
    central.setUint32(0, 0x02014b50, true)
    central.setUint16(4, (3 << 8) | 20, true)
    central.setUint16(6, 20, true)
    central.setUint16(10, method, true)
    central.setUint32(16, crc, true)
    central.setUint32(20, body.byteLength, true)
    central.setUint32(24, raw.byteLength, true)
    central.setUint16(28, name.byteLength, true)
    central.setUint32(38, ((f.mode ?? 0o100644) << 16) >>> 0, true)
    central.setUint32(42, offset, true)
    locals.push(new Uint8Array(local.buffer), name, body)
    centrals.push(new Uint8Array(central.buffer), name)
    offset += 30 + name.byteLength + body.byteLength
  }
  const cdSize = centrals.reduce((n, c) => n + c.byteLength, 0)
  const end = new DataView(new ArrayBuffer(22))
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, files.length, true)
  end.setUint16(10, files.length, true)
  end.setUint32(12, cdSize, true)
  end.setUint32(16, offset, true)
  return concat([...locals, ...centrals, new Uint8Array(end.buffer)])
}

export function makeTarGz(files: FileSpec[]): Uint8Array<ArrayBuffer> {
  const blocks: Uint8Array[] = []
  for (const f of files) {
    const data = bytesOf(f.data)
    const header = new Uint8Array(512)
    const put = (s: string, at: number) => header.set(new TextEncoder().encode(s), at)
    put(f.name, 0)
    put('0000644\0', 100)
    put(data.byteLength.toString(8).padStart(11, '0') + '\0', 124)
    put('00000000000\0', 136)
    put(f.mode === 0o120777 ? '2' : f.name.endsWith('/') ? '5' : '0', 156)
    put('ustar\0' + '00', 257)
    put('        ', 148)
    const sum = header.reduce((a, b) => a + b, 0)
    put(sum.toString(8).padStart(6, '0') + '\0 ', 148)
    blocks.push(header, data, new Uint8Array((512 - (data.byteLength % 512)) % 512))
  }
  blocks.push(new Uint8Array(1024))
  return new Uint8Array(gzipSync(concat(blocks)))
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
