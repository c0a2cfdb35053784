/**
 * The hostile corpus: archives built to make an inspector slow, hungry or wrong, each with the verdict it must
 * get; plus real-looking packs that must still pass. Generated on demand; nothing binary is committed.
 */
import { constants, deflateRawSync, gzipSync } from 'node:zlib'
import type { ArchiveLimits } from '../../src/archive/entries'
import { buildZip, concat, makeTar, makeTarGz, type TarEntrySpec, type ZipEntrySpec } from './archives'

export interface HostileCase {
  name: string
  format: 'zip' | 'tar.gz' | 'neither'
  bytes(): Uint8Array
  /** What the inspection must answer: a reason containing this text, or success with these host nodes. */
  expect: { reason: string } | { hostNodes: string[] }
  limits?: Partial<ArchiveLimits>
}

/** Every way of spelling a path that leaves the extraction directory, on some system. */
export const TRAVERSAL_SPELLINGS = [
  '../x.py',
  'a/../../x.py',
  '..',
  'a/..',
  '/abs.py',
  '//host/share/x.py',
  '\\abs.py',
  '\\\\host\\share\\x.py',
  'C:\\x.py',
  'C:/x.py',
  'C:x.py',
  '..\\x.py',
  'a\\..\\..\\x.py',
  '../\u0000x.py',
  'x.py\u0000/../../y.py',
]

/** In tar name fields (name, ustar prefix, GNU long name) a NUL ends the field, so what follows it is never read. */
const endsAtNul = (spelling: string) => spelling.indexOf('\0') > 0 && !spelling.slice(0, spelling.indexOf('\0')).includes('..')

const enc = new TextEncoder()
const MAPPINGS = 'NODE_CLASS_MAPPINGS = {"Blur": Blur}\n'

/** The Python text that made the old extractor quadratic: each opening rescanned the rest. */
export const quadraticPython = (repeats: number) => 'NODE_CLASS_MAPPINGS={'.repeat(repeats)

/** 5,000 distinct host node names, as many times as fit in `bytes` of one dict literal: the most work extraction can be given. */
export function keyHeavyPython(bytes: number): string {
  const keys = Math.floor((bytes - 30) / 10)
  return `NODE_CLASS_MAPPINGS = {${Array.from({ length: keys }, (_, i) => `"N${String(i % 5000).padStart(4, '0')}":0,`).join('')}}`
}
export const KEY_HEAVY_NAMES = Array.from({ length: 5000 }, (_, i) => `N${String(i).padStart(4, '0')}`)

/** A raw deflate stream of `mib` MiB of zeros, ~1 KiB per MiB: independent full-flush blocks, then a final empty block. */
export function deflatedZeros(mib: number): Uint8Array {
  const block = deflateRawSync(new Uint8Array(1024 * 1024), { finishFlush: constants.Z_FULL_FLUSH })
  return concat([...Array.from({ length: mib }, () => block), deflateRawSync(new Uint8Array(0))])
}

const zipOf =
  (entries: ZipEntrySpec[], extra: Omit<Parameters<typeof buildZip>[0], 'entries'> = {}) =>
  () =>
    buildZip({ entries, ...extra })
const tarGzOf = (entries: TarEntrySpec[]) => () => makeTarGz(entries)
const refused = (reason: string) => ({ reason })

function zipCases(): HostileCase[] {
  const oneMiB = new Uint8Array(1024 * 1024)
  const cases: HostileCase[] = [
    {
      name: 'the quadratic Python text (366-byte zip)',
      format: 'zip',
      bytes: zipOf([{ name: '__init__.py', data: quadraticPython(4000) }]),
      expect: { hostNodes: [] },
    },
    {
      name: 'the quadratic Python text, 2 MiB of it',
      format: 'zip',
      bytes: zipOf([{ name: '__init__.py', data: quadraticPython(99_000) + MAPPINGS }]),
      expect: { hostNodes: ['Blur'] },
    },
    {
      name: 'eight Python files of 2 MiB, each packed with host node keys',
      format: 'zip',
      bytes: zipOf(Array.from({ length: 8 }, (_, i) => ({ name: `nodes${i}.py`, data: keyHeavyPython(2 * 1024 * 1024) }))),
      expect: { hostNodes: KEY_HEAVY_NAMES },
    },
    {
      name: 'hundreds of central records on one local header claiming 1 MiB each',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: oneMiB, deflate: false }], {
        extraCentral: Array.from({ length: 300 }, (_, i) => ({ name: `copy${i}.py`, data: oneMiB, deflate: false })),
      }),
      expect: refused('overlap'),
    },
    {
      name: 'an entry whose local header starts inside the previous entry data',
      format: 'zip',
      bytes: zipOf([
        { name: 'a.bin', data: new Uint8Array(1000), deflate: false },
        { name: 'b.bin', data: new Uint8Array(1000), deflate: false, central: { offset: 30 + 5 + 500 } },
      ]),
      expect: refused('zip entries "a.bin" and "b.bin" overlap'),
    },
    {
      name: 'a compressed size that claims the next entry',
      format: 'zip',
      bytes: zipOf([
        { name: 'a.bin', data: new Uint8Array(1000), deflate: false, central: { compressedSize: 1500, size: 1500 } },
        { name: 'b.bin', data: new Uint8Array(1000), deflate: false },
      ]),
      expect: refused('overlap'),
    },
    {
      name: 'a data range past the end of the file',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: 'x = 1\n', central: { compressedSize: 50_000_000 } }]),
      expect: refused('zip entry "a.py" lies outside the file'),
    },
    {
      name: 'a local header offset past the end of the file',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: 'x = 1\n', central: { offset: 0x7fffffff } }]),
      expect: refused('lies outside the file'),
    },
    {
      name: 'a local header offset that points at data, not a header',
      format: 'zip',
      bytes: zipOf([{ name: 'a.bin', data: new Uint8Array(4000), deflate: false, central: { offset: 100, compressedSize: 10, size: 10 } }]),
      expect: refused('zip entry "a.bin": invalid local file header signature'),
    },
    ...(
      [
        ['name', { name: 'b.py' }],
        ['compression method', { method: 0 }],
        ['flags', { flags: 0x1 }],
        ['sizes', { size: 999 }],
        ['CRC-32', { crc: 1234 }],
      ] as const
    ).map(([field, local]): HostileCase => ({
      name: `a local header that disagrees with the central directory: ${field}`,
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: MAPPINGS, local }]),
      expect: refused(`zip entry "a.py": its local header disagrees with the central directory (${field})`),
    })),
    {
      name: 'a Python file that inflates far beyond its declared size',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', body: deflatedZeros(1), central: { size: 100 }, local: { size: 100 } }]),
      expect: refused('zip entry "a.py" inflates beyond its declared size'),
    },
    {
      name: 'a Python file whose compressed size no deflate of its declared size could reach',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', body: deflatedZeros(64), central: { size: 100 }, local: { size: 100 } }]),
      expect: refused('more than 100 bytes could take'),
    },
    {
      name: 'a Python file whose bytes fail the CRC-32 check',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: MAPPINGS, central: { crc: 42 }, local: { crc: 42 } }]),
      expect: refused('zip entry "a.py" fails its CRC-32 check'),
    },
    {
      name: 'a file not read for its content that claims 500 MiB and holds bytes that do not inflate',
      format: 'zip',
      bytes: zipOf([
        { name: 'a.py', data: MAPPINGS },
        {
          name: 'model.bin',
          body: enc.encode('garbage-not-deflate'),
          central: { size: 500 * 1024 * 1024 },
          local: { size: 500 * 1024 * 1024 },
        },
      ]),
      expect: refused('zip entry "model.bin" cannot be decompressed'),
    },
    {
      name: 'a file not read for its content that inflates to less than it claims',
      format: 'zip',
      bytes: zipOf([{ name: 'big.py', data: 'x = 1\n', central: { size: 3 * 1024 * 1024 }, local: { size: 3 * 1024 * 1024 } }]),
      expect: refused('zip entry "big.py" holds 6 bytes, not the 3145728 its header states'),
    },
    {
      name: 'a file not read for its content that inflates beyond what it claims',
      format: 'zip',
      bytes: zipOf([{ name: 'data.json', body: deflatedZeros(1), central: { size: 100 }, local: { size: 100 } }]),
      expect: refused('zip entry "data.json" inflates beyond its declared size'),
    },
    ...[true, false].map((deflate): HostileCase => ({
      name: `a file not read for its content whose bytes fail the CRC-32 check (${deflate ? 'deflated' : 'stored'})`,
      format: 'zip',
      bytes: zipOf([
        { name: 'a.py', data: MAPPINGS },
        { name: 'README.md', data: 'read me\n'.repeat(1000), deflate, central: { crc: 42 }, local: { crc: 42 } },
      ]),
      expect: refused('zip entry "README.md" fails its CRC-32 check'),
    })),
    {
      name: 'zip bomb by ratio: 1.5 GiB of zeros in 1.6 MB',
      format: 'zip',
      bytes: zipOf([
        { name: 'zeros.bin', body: deflatedZeros(1536), central: { size: 1536 * 1024 * 1024 }, local: { size: 1536 * 1024 * 1024 } },
      ]),
      expect: refused('archive expands beyond 1073741824 bytes'),
    },
    {
      name: 'zip bomb by count: 20,001 entries',
      format: 'zip',
      bytes: zipOf(Array.from({ length: 20_001 }, (_, i) => ({ name: `f${i}`, deflate: false }))),
      expect: refused('archive has 20001 entries; the limit is 20000'),
    },
    {
      name: 'an end record that claims 65,535 entries',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: MAPPINGS }], { end: { count: 0xffff } }),
      expect: refused('archive has 65535 entries; the limit is 20000'),
    },
    {
      name: 'a central directory offset past the end of the file',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: MAPPINGS }], { end: { cdOffset: 0x7ffffff0 } }),
      expect: refused('not a valid zip archive'),
    },
    {
      name: 'an encrypted entry',
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: MAPPINGS, central: { flags: 1 }, local: { flags: 1 } }]),
      expect: refused('zip entry "a.py" is encrypted'),
    },
    ...[12, 14, 93, 99].map((method): HostileCase => ({
      name: `compression method ${method}`,
      format: 'zip',
      bytes: zipOf([{ name: 'a.py', data: MAPPINGS, central: { method }, local: { method } }]),
      expect: refused(`zip entry "a.py" uses unsupported compression method ${method}`),
    })),
    {
      name: 'a symbolic link',
      format: 'zip',
      bytes: zipOf([{ name: 'link.py', data: '/etc/passwd', mode: 0o120777 }]),
      expect: refused('archive entry "link.py" is a symbolic link'),
    },
    ...[
      ['a FIFO', 0o010644],
      ['a character device', 0o020644],
      ['a block device', 0o060644],
      ['a socket', 0o140644],
    ].map(([what, mode]): HostileCase => ({
      name: `${what} by its unix mode`,
      format: 'zip',
      bytes: zipOf([{ name: 'special', mode: mode as number }]),
      expect: refused('archive entry "special" is a device, FIFO or socket'),
    })),
    ...TRAVERSAL_SPELLINGS.map((spelling): HostileCase => ({
      name: `zip name ${JSON.stringify(spelling)}`,
      format: 'zip',
      bytes: zipOf([
        { name: '__init__.py', data: MAPPINGS },
        { name: spelling, data: 'x' },
      ]),
      expect: refused('has an unsafe path'),
    })),
    ...TRAVERSAL_SPELLINGS.map((spelling): HostileCase => ({
      name: `zip unicode path field ${JSON.stringify(spelling)}`,
      format: 'zip',
      bytes: zipOf([{ name: 'fine.py', data: 'x', centralExtra: unicodePathField(spelling) }]),
      expect: refused('(unicode path field) has an unsafe path'),
    })),
  ]
  const valid = buildZip({
    entries: [
      { name: '__init__.py', data: MAPPINGS },
      { name: 'nodes.py', data: 'x = 1\n' },
    ],
  })
  cases.push(
    {
      name: 'a zip cut before its end record',
      format: 'zip',
      bytes: () => valid.subarray(0, valid.length - 30),
      expect: refused('not a valid zip archive'),
    },
    {
      name: 'a zip cut in half',
      format: 'zip',
      bytes: () => valid.subarray(0, valid.length >> 1),
      expect: refused('not a valid zip archive'),
    },
    { name: 'a zip with no entries', format: 'zip', bytes: zipOf([]), expect: refused('archive is empty') },
    {
      name: 'zip magic then garbage',
      format: 'zip',
      bytes: () => enc.encode('PK\u0003\u0004 this is not a zip at all'),
      expect: refused('not a valid zip archive'),
    },
  )
  return cases
}

/** Info-ZIP Unicode Path extra field (0x7075): version 1, CRC-32 of the header name, then the UTF-8 name. */
function unicodePathField(name: string): Uint8Array {
  const utf8 = enc.encode(name)
  const field = new DataView(new ArrayBuffer(9 + utf8.byteLength))
  field.setUint16(0, 0x7075, true)
  field.setUint16(2, 5 + utf8.byteLength, true)
  field.setUint8(4, 1)
  field.setUint32(5, Bun.hash.crc32(enc.encode('fine.py')), true)
  new Uint8Array(field.buffer).set(utf8, 9)
  return new Uint8Array(field.buffer)
}

function tarCases(): HostileCase[] {
  const nameFields: [string, (spelling: string) => TarEntrySpec, boolean][] = [
    ['tar name', (s) => ({ name: s, data: 'x' }), true],
    ['ustar prefix', (s) => ({ name: 'x.py', prefix: s, data: 'x' }), true],
    ['pax path', (s) => ({ name: 'x.py', pax: { path: s }, data: 'x' }), false],
    ['pax linkpath', (s) => ({ name: 'x.py', pax: { linkpath: s }, data: 'x' }), false],
    ['GNU long name', (s) => ({ name: '././@LongLink', gnuLongName: s, data: 'x' }), true],
  ]
  const cases: HostileCase[] = []
  for (const [field, entry, cString] of nameFields) {
    for (const spelling of TRAVERSAL_SPELLINGS) {
      cases.push({
        name: `${field} ${JSON.stringify(spelling)}`,
        format: 'tar.gz',
        bytes: tarGzOf([{ name: '__init__.py', data: MAPPINGS }, entry(spelling)]),
        expect: cString && endsAtNul(spelling) ? { hostNodes: ['Blur'] } : refused('has an unsafe path'),
      })
    }
  }
  const kinds: [string, string, string][] = [
    ['1', 'a hard link', 'links are not allowed'],
    ['2', 'a symbolic link', 'links are not allowed'],
    ['3', 'a character device', 'only regular files and directories are allowed'],
    ['4', 'a block device', 'only regular files and directories are allowed'],
    ['6', 'a FIFO', 'only regular files and directories are allowed'],
    ['S', 'of an unknown type', 'only regular files and directories are allowed'],
    ['V', 'of an unknown type', 'only regular files and directories are allowed'],
    ['Z', 'of an unknown type', 'only regular files and directories are allowed'],
  ]
  for (const [type, what, rule] of kinds) {
    cases.push({
      name: `tar typeflag ${type} (${what})`,
      format: 'tar.gz',
      bytes: tarGzOf([
        { name: '__init__.py', data: MAPPINGS },
        { name: 'entry', type, linkname: '/etc/passwd' },
      ]),
      expect: refused(`archive entry "entry" is ${what}; ${rule}`),
    })
  }
  const tar = makeTar([
    { name: '__init__.py', data: MAPPINGS },
    { name: 'data.bin', data: new Uint8Array(5000) },
  ])
  const gz = gzipSync(tar)
  const badChecksum = tar.slice()
  badChecksum[0] = 'X'.charCodeAt(0)
  cases.push(
    {
      name: 'a pax record over 4 MiB',
      format: 'tar.gz',
      bytes: tarGzOf([{ name: 'x.py', pax: { comment: 'x'.repeat(5 * 1024 * 1024) }, data: 'x' }]),
      expect: refused('tar archive has a pax or long-name record over 4 MiB'),
    },
    {
      name: 'a GNU long name over 4 MiB',
      format: 'tar.gz',
      bytes: tarGzOf([{ name: 'x.py', gnuLongName: 'a/'.repeat(2.5 * 1024 * 1024), data: 'x' }]),
      expect: refused('tar archive has a pax or long-name record over 4 MiB'),
    },
    {
      name: 'a tar.gz cut mid-stream',
      format: 'tar.gz',
      bytes: () => gz.subarray(0, gz.length >> 1),
      expect: refused('tar.gz archive is truncated'),
    },
    {
      name: 'a tar cut inside an entry (complete gzip)',
      format: 'tar.gz',
      bytes: () => gzipSync(tar.subarray(0, 512 * 4)),
      expect: refused('tar archive is truncated'),
    },
    {
      name: 'a tar header with a wrong checksum',
      format: 'tar.gz',
      bytes: () => gzipSync(badChecksum),
      expect: refused('tar archive has a corrupt header'),
    },
    {
      name: 'a directory entry that carries data',
      format: 'tar.gz',
      bytes: tarGzOf([{ name: 'dir/', type: '5', data: makeTar([{ name: '../evil.py', data: 'x' }]) }]),
      expect: refused('tar directory entry "dir/" carries'),
    },
    {
      name: 'gzip bomb: 64 MiB of zeros after the last entry',
      format: 'tar.gz',
      bytes: () => gzipSync(concat([makeTar([{ name: '__init__.py', data: MAPPINGS }], { end: false }), new Uint8Array(64 * 1024 * 1024)])),
      expect: refused('tar archive holds more than 16777216 bytes outside its entries'),
    },
    {
      name: 'tar bomb by ratio: an entry declaring 1.5 GiB',
      format: 'tar.gz',
      bytes: tarGzOf([{ name: 'zeros.bin', data: '', declaredSize: 1536 * 1024 * 1024 }]),
      expect: refused('archive expands beyond 1073741824 bytes'),
    },
    {
      name: 'tar bomb by count: 20,001 entries',
      format: 'tar.gz',
      bytes: tarGzOf(Array.from({ length: 20_001 }, (_, i) => ({ name: `f${i}` }))),
      expect: refused('archive has more than 20000 entries'),
    },
    { name: 'a tar.gz holding no entries', format: 'tar.gz', bytes: tarGzOf([]), expect: refused('archive is empty') },
    {
      name: 'gzip magic then garbage',
      format: 'tar.gz',
      bytes: () => concat([new Uint8Array([0x1f, 0x8b]), enc.encode(' this is not gzip')]),
      expect: refused('not a valid gzip stream'),
    },
  )
  return cases
}

function otherCases(): HostileCase[] {
  return [
    { name: 'an empty file', format: 'neither', bytes: () => new Uint8Array(), expect: refused('archive file is empty') },
    {
      name: 'bytes that are not an archive',
      format: 'neither',
      bytes: () => enc.encode('#!/bin/sh\nrm -rf /\n'),
      expect: refused('not a zip or tar.gz archive'),
    },
  ]
}

export function hostileCorpus(): HostileCase[] {
  return [...zipCases(), ...tarCases(), ...otherCases()]
}

/** The cases that cost the inspector most (measured with scripts/bench/hostile.ts), refused and accepted alike. */
export const COSTLIEST_CASES = [
  'eight Python files of 2 MiB, each packed with host node keys',
  'tar bomb by count: 20,001 entries',
  'gzip bomb: 64 MiB of zeros after the last entry',
  'the quadratic Python text, 2 MiB of it',
  'zip bomb by count: 20,001 entries',
  'hundreds of central records on one local header claiming 1 MiB each',
  'zip bomb by ratio: 1.5 GiB of zeros in 1.6 MB',
  'a Python file that inflates far beyond its declared size',
]

export function costliestCases(): HostileCase[] {
  const corpus = hostileCorpus()
  return COSTLIEST_CASES.map((name) => corpus.find((c) => c.name === name)!)
}

/** Source of a real-looking pack: mappings spread over modules in the ways packs write them. */
export function realisticPackFiles(): { name: string; data: string }[] {
  const node = (cls: string) =>
    `class ${cls}:\n    @classmethod\n    def INPUT_TYPES(cls):\n        return {"required": {"image": ("IMAGE",)}}\n`
  return [
    {
      name: 'pack/__init__.py',
      data: [
        'from .nodes.blur import Blur',
        'from .nodes import extra',
        '',
        '# NODE_CLASS_MAPPINGS = {"OldNode": Old}  (kept for reference)',
        'NODE_CLASS_MAPPINGS: dict[str, type] = {',
        '    "Blur (Gaussian)": Blur,',
        "    'Sharpen': extra.Sharpen,",
        '}',
        'NODE_CLASS_MAPPINGS.update(extra.MAPPINGS)',
        'NODE_CLASS_MAPPINGS |= {"Grain": extra.Grain}',
        'NODE_CLASS_MAPPINGS["Vignette"] = extra.Vignette',
        'NODE_DISPLAY_NAME_MAPPINGS = {"Blur (Gaussian)": "Gaussian Blur"}',
        '__all__ = ["NODE_CLASS_MAPPINGS", "NODE_DISPLAY_NAME_MAPPINGS"]',
      ].join('\n'),
    },
    { name: 'pack/nodes/__init__.py', data: '' },
    { name: 'pack/nodes/blur.py', data: node('Blur') },
    { name: 'pack/nodes/extra.py', data: [node('Sharpen'), node('Grain'), node('Vignette'), 'MAPPINGS = {"Unused": Grain}\n'].join('\n') },
    { name: 'pack/web/js/widget.js', data: 'export function widget() { return 1 }\n' },
    { name: 'pack/pyproject.toml', data: '[project]\nname = "pack"\nversion = "1.0.0"\n' },
    { name: 'pack/README.md', data: '# Pack\n\nBlurs, sharpens, adds grain.\n' },
  ]
}

export const REALISTIC_HOST_NODES = ['Blur (Gaussian)', 'Grain', 'Sharpen', 'Vignette']

/** The realistic pack as each tool writes it: directories, data descriptors, long names in every tar spelling. */
export function realisticPacks(): HostileCase[] {
  const files = realisticPackFiles()
  const dirs = ['pack/', 'pack/nodes/', 'pack/web/', 'pack/web/js/']
  const deepName = `pack/${'deep/'.repeat(30)}notes.txt`
  const expect = { hostNodes: REALISTIC_HOST_NODES }
  return [
    { name: 'zip with directories', format: 'zip', bytes: zipOf([...dirs.map((name) => ({ name })), ...files]), expect },
    {
      name: 'zip written as a stream (data descriptors)',
      format: 'zip',
      bytes: zipOf(files.map((f) => ({ ...f, descriptor: true }))),
      expect,
    },
    { name: 'zip stored, not deflated', format: 'zip', bytes: zipOf(files.map((f) => ({ ...f, deflate: false }))), expect },
    ...[true, false].map((deflate): HostileCase => ({
      // Checked a piece at a time (the pieces' CRC-32 chained), though never read for its content.
      name: `zip with a 3 MiB model file beside its Python (${deflate ? 'deflated' : 'stored'})`,
      format: 'zip',
      bytes: zipOf([...files, { name: 'pack/model.bin', data: crypto.getRandomValues(new Uint8Array(3 * 1024 * 1024 + 17)), deflate }]),
      expect,
    })),
    {
      name: 'tar.gz with a ustar prefix and a pax path for long names',
      format: 'tar.gz',
      bytes: tarGzOf([
        ...dirs.map((name) => ({ name })),
        ...files,
        { name: 'notes.txt', prefix: 'pack/docs/and/more', data: 'n' },
        { name: 'PaxHeader/notes.txt', pax: { path: deepName }, data: 'n' },
      ]),
      expect,
    },
    {
      name: 'tar.gz in GNU format with long-name records',
      format: 'tar.gz',
      bytes: tarGzOf([
        ...files.map((f) => ({ ...f, magic: 'gnu' as const })),
        { name: '././@LongLink', gnuLongName: deepName, magic: 'gnu', data: 'n' },
      ]),
      expect,
    },
  ]
}
