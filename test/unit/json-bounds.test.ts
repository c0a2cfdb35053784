/** Free-form objects' bounds (src/domain/json-bounds.ts), and a mirror meeting an upstream node that exceeds them. */
import { describe, expect, test } from 'bun:test'
import { jsonNestsWithin, MAX_JSON_DEPTH, MAX_OBJECT_JSON, nestsWithin, objectProblem } from '../../src/domain/json-bounds'
import { parseUpstreamNode } from '../../src/domain/upstream-wire'
import { nestedJson } from '../support/nested-json'

/** An object nested `levels` deep, parsed from text (no recursion builds it). */
const nested = (levels: number): unknown => JSON.parse(nestedJson(levels))

describe('nestsWithin', () => {
  test('counts objects and arrays alike, a plain value being level 0', () => {
    expect(nestsWithin(1, 0)).toBe(true)
    expect(nestsWithin('text', 0)).toBe(true)
    expect(nestsWithin({}, 0)).toBe(false)
    expect(nestsWithin({}, 1)).toBe(true)
    expect(nestsWithin({ a: [1, { b: null }] }, 3)).toBe(true)
    expect(nestsWithin({ a: [1, { b: null }] }, 2)).toBe(false)
    expect(nestsWithin([[[[]]]], 4)).toBe(true)
    expect(nestsWithin([[[[]]]], 3)).toBe(false)
  })

  test('finds the deep branch among wide shallow ones, and takes 100,000 levels without overflowing', () => {
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, { v: i }]))
    expect(nestsWithin({ ...wide, deep: nested(MAX_JSON_DEPTH) }, MAX_JSON_DEPTH + 1)).toBe(true)
    expect(nestsWithin({ ...wide, deep: nested(MAX_JSON_DEPTH + 1) }, MAX_JSON_DEPTH + 1)).toBe(false)
    expect(nestsWithin(nested(100_000), MAX_JSON_DEPTH)).toBe(false)
  })
})

describe('jsonNestsWithin', () => {
  const bytes = (text: string) => new TextEncoder().encode(text)
  const depthOf = (json: Uint8Array | Uint8Array[]) => {
    let depth = 0
    while (!jsonNestsWithin(json, depth)) depth++
    return depth
  }

  test('counts arrays and objects as JSON.parse nests them, not brackets inside strings or escaped quotes', () => {
    for (const text of [
      '1',
      '"[[["',
      '{}',
      '[1,{"a":[2]}]',
      '{"a":"]]]}}}","b":[[{"c":"\\"[["}]]}',
      '["\\\\",[["é[\\u005b"]]]',
      nestedJson(40),
    ]) {
      expect([text, depthOf(bytes(text))]).toEqual([text, nestsDepth(JSON.parse(text))])
    }
  })

  test('reads the parts a reply came in as one text, an escape split between two included', () => {
    const text = '{"a":"x\\"[[[[[","b":[[1]]}'
    const whole = depthOf(bytes(text))
    for (let cut = 1; cut < text.length; cut++) {
      expect(depthOf([bytes(text.slice(0, cut)), bytes(text.slice(cut))])).toBe(whole)
    }
    expect(whole).toBe(3)
  })
})

/** How deep a parsed value nests, by nestsWithin. */
function nestsDepth(value: unknown): number {
  let depth = 0
  while (!nestsWithin(value, depth)) depth++
  return depth
}

describe('objectProblem', () => {
  test('says why: too deep first (so nothing serializes it), then too large', () => {
    expect(objectProblem(nested(MAX_JSON_DEPTH))).toBeUndefined()
    expect(objectProblem(nested(200_000))).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`)
    expect(objectProblem({ text: 'x'.repeat(MAX_OBJECT_JSON) })).toBe(`is larger than ${MAX_OBJECT_JSON} characters of JSON`)
  })
})

describe('an upstream node with hostile translations', () => {
  const node = (translations: unknown) => ({ id: 'pack', name: 'Pack', translations })

  test('nested 100,000 levels deep: refused with the reason, not a stack overflow', () => {
    const parsed = parseUpstreamNode(node(nested(100_000)))
    expect(parsed.success).toBe(false)
    expect(parsed.issues?.[0]?.message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`)
  })

  test('within the bounds: taken as it is', () => {
    const parsed = parseUpstreamNode(node({ de: { name: 'Paket' } }))
    expect(parsed.success).toBe(true)
  })
})
