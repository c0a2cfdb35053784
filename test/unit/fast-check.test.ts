/**
 * The fast path in front of valibot accepts exactly what valibot accepts, and what it accepts maps to the same
 * mirror items: checked on real feed entries, each field replaced by values of every kind and size.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import * as v from 'valibot'
import { FeedEnvelopeSchema, parseFeedEnvelope } from '../../src/domain/feed'
import { nodeItem, publisherItem, versionItem } from '../../src/domain/mirror-items'
import {
  parseUpstreamNode,
  parseUpstreamPublisher,
  parseUpstreamVersion,
  UpstreamNodeSchema,
  UpstreamPublisherSchema,
  UpstreamVersionSchema,
} from '../../src/domain/upstream-wire'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'

let t: TestApp
let feed: { instance: string; next: number; head: number; changes: Record<string, any>[] }
beforeAll(async () => {
  t = await makeTestApp()
  const { pat } = await aliceWithPublisher(t)
  await publishActive(t, { pat, node: 'pack', version: '1.0.0', nodeFields: { tags: ['image'], license: '{"file": "LICENSE"}' } })
  feed = (await t.call('GET', '/changes')).body
})
afterAll(() => t.cleanup())

const long = (n: number) => 'x'.repeat(n)
/** Values of every kind, and sizes at and past the bounds. */
const VALUES: unknown[] = [
  undefined,
  null,
  '',
  ' 2.0.0 ',
  '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  'Pack',
  'a/b',
  long(200),
  long(201),
  long(4000),
  long(4001),
  long(100_000),
  long(100_001),
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 60,
  true,
  false,
  [],
  ['a', 'b'],
  [1],
  [null],
  [long(4001)],
  Array.from({ length: 10_001 }, () => 'a'),
  {},
  { a: 1 },
  { __proto__: null, id: 'x' },
  { big: long(100_001) },
]

const copy = <T>(x: T): T => structuredClone(x)
const mapped = {
  publisher: (o: any) => publisherItem(o),
  node: (o: any) => nodeItem(o, 'acme'),
  version: (o: any) => versionItem(o, 'pack'),
}

/** Every entity of the feed, with each of its fields (and one unknown field) set to each value in turn. */
function* variants(kind: 'publisher' | 'node' | 'version'): Generator<unknown> {
  const entity = feed.changes.find((c) => c.kind === kind)!.entity
  yield copy(entity)
  for (const key of [...Object.keys(entity), 'unknown_field', 'publisher', 'latest_version'])
    for (const value of VALUES) yield { ...copy(entity), [key]: value }
  yield undefined
  yield 'not an object'
  yield [entity]
}

describe('the fast path of upstream entity checks', () => {
  const cases = [
    { kind: 'publisher', fast: parseUpstreamPublisher, schema: UpstreamPublisherSchema },
    { kind: 'node', fast: parseUpstreamNode, schema: UpstreamNodeSchema },
    { kind: 'version', fast: parseUpstreamVersion, schema: UpstreamVersionSchema },
  ] as const
  for (const c of cases) {
    test(`${c.kind}: the same verdict as valibot, the same message, the same item`, () => {
      let accepted = 0
      let refused = 0
      for (const input of variants(c.kind)) {
        const slow = v.safeParse(c.schema, copy(input))
        const fast = c.fast(copy(input))
        expect({ input, success: fast.success }).toEqual({ input, success: slow.success })
        if (slow.success) {
          accepted++
          expect(mapped[c.kind](fast.output)).toEqual(mapped[c.kind](slow.output))
        } else {
          refused++
          expect(fast.issues![0].message).toBe(slow.issues[0].message)
        }
      }
      expect(accepted).toBeGreaterThan(10)
      expect(refused).toBeGreaterThan(10)
    })
  }
})

describe('what the fast path passes on', () => {
  // It passes a valid entity on as it came, unknown keys and all, where valibot's copy keeps the schema's keys only:
  // the same items come of both only while the readers read no key the schema does not check.
  const cases = [
    { kind: 'publisher', schema: UpstreamPublisherSchema },
    { kind: 'node', schema: UpstreamNodeSchema },
    { kind: 'version', schema: UpstreamVersionSchema },
  ] as const
  for (const c of cases) {
    test(`${c.kind}: the mapping reads only keys the schema checks`, () => {
      const read = new Set<string>()
      const entity = new Proxy({ id: 'x', version: '1.0.0' } as Record<string, unknown>, {
        get(target, key) {
          if (typeof key === 'string') read.add(key)
          return target[key as string]
        },
      })
      mapped[c.kind](entity)
      expect(read.size).toBeGreaterThan(5)
      expect([...read].filter((key) => !(key in c.schema.entries))).toEqual([])
    })
  }
})

describe('the fast path of feed envelope checks', () => {
  test('the same verdict and entries as valibot, whatever an entry or the envelope holds', () => {
    const fields = ['serial', 'kind', 'id', 'op', 'host_nodes', 'archive', 'entity']
    const extra = [
      'publisher',
      'upsert',
      'delete',
      'ban',
      'other',
      ['ImageBlur'],
      [long(201)],
      { sha256: 'a'.repeat(64), size: 10 },
      { sha256: 'A'.repeat(64), size: 10 },
      { sha256: 'a'.repeat(64), size: -1 },
      { sha256: 'a'.repeat(64) },
    ]
    const pages: unknown[] = [copy(feed)]
    for (let i = 0; i < feed.changes.length; i++)
      for (const key of fields)
        for (const value of [...VALUES, ...extra]) {
          const page = copy(feed)
          page.changes[i] = { ...page.changes[i], [key]: value }
          pages.push(page)
        }
    for (const key of ['instance', 'next', 'head', 'changes']) for (const value of VALUES) pages.push({ ...copy(feed), [key]: value })
    let accepted = 0
    for (const page of pages) {
      const slow = v.safeParse(FeedEnvelopeSchema, copy(page))
      const fast = parseFeedEnvelope(copy(page))
      expect({ page, success: fast.success }).toEqual({ page, success: slow.success })
      if (!slow.success) expect(fast.issues![0].message).toBe(slow.issues[0].message)
      else {
        accepted++
        // valibot's copy keeps the known keys only: the fast path's entries hold at least those, alike.
        const known = (c: Record<string, unknown>) => Object.fromEntries(Object.entries(c).filter(([k]) => fields.includes(k)))
        expect((fast.output as typeof slow.output).changes.map(known)).toEqual(slow.output.changes.map(known))
      }
    }
    expect(accepted).toBeGreaterThan(20)
  })
})
