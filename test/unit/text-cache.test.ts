/** The cache of texts kept in one buffer (node JSON, rendered publishers): what it keeps, what goes, and when. */
import { expect, test } from 'bun:test'
import { TextCache } from '../../src/text-cache'

/** Keys as the cache holds them now, in the order given. */
const held = (cache: TextCache, keys: string[]) => keys.filter((k) => cache.get(k) !== undefined)

test('holds at most its bytes, the oldest going first; a text larger than the buffer is not kept', () => {
  const cache = new TextCache(300)
  for (const k of ['a', 'b', 'c']) expect(cache.set(k, k.repeat(100))).toBe(true)
  expect(cache.bytes).toBe(300)
  expect(cache.set('d', 'd'.repeat(150))).toBe(true) // a and b are where it goes
  expect(held(cache, ['a', 'b', 'c', 'd'])).toEqual(['c', 'd'])
  expect(cache.get('c')).toBe('c'.repeat(100))
  expect(cache.get('d')).toBe('d'.repeat(150))
  expect(cache.bytes).toBe(250)
  // Full to its last byte (c, d and e), one byte more overwrites the first byte of the oldest: it goes.
  cache.set('e', 'e'.repeat(50))
  expect(cache.set('f', 'f')).toBe(true)
  expect(held(cache, ['c', 'd', 'e', 'f'])).toEqual(['d', 'e', 'f'])
  expect(cache.bytes).toBe(201)
  expect(cache.set('huge', 'h'.repeat(301))).toBe(false)
  expect(cache.get('huge')).toBeUndefined()
  expect(cache.bytes).toBe(201)
})

test('a text never wraps round the buffer: one that does not fit before its end starts again at the front', () => {
  const cache = new TextCache(300)
  cache.set('a', 'a'.repeat(120))
  cache.set('b', 'b'.repeat(120))
  // 60 bytes left at the end: c goes to the front, over a; b is older than c, newer than a, and stays.
  cache.set('c', 'c'.repeat(100))
  expect(held(cache, ['a', 'b', 'c'])).toEqual(['b', 'c'])
  expect(cache.get('c')).toBe('c'.repeat(100))
  // The end skipped belongs to the lap before: b, written before it, goes before anything written after c.
  cache.set('d', 'd'.repeat(150))
  expect(held(cache, ['b', 'c', 'd'])).toEqual(['c', 'd'])
  expect(cache.get('d')).toBe('d'.repeat(150))
})

test('its buffer grows with its first lap, texts kept across, up to the bound; then it goes round', () => {
  const cache = new TextCache(1 << 20)
  const text = (i: number) => `${i}:${'t'.repeat(2000)}`
  for (let i = 0; i < 400; i++) cache.set(`k${i}`, text(i))
  for (let i = 0; i < 400; i++) expect(cache.get(`k${i}`)).toBe(text(i))
  for (let i = 400; i < 1000; i++) cache.set(`k${i}`, text(i))
  expect(cache.bytes).toBeLessThanOrEqual(1 << 20)
  expect(cache.get('k0')).toBeUndefined()
  for (let i = 990; i < 1000; i++) expect(cache.get(`k${i}`)).toBe(text(i))
  // A bound far past the machine's memory holds what it is given, as a smaller one would.
  const unbounded = new TextCache(Number.MAX_SAFE_INTEGER)
  for (let i = 0; i < 100; i++) unbounded.set(`k${i}`, text(i))
  expect(unbounded.get('k0')).toBe(text(0))
  expect(unbounded.bytes).toBe(Array.from({ length: 100 }, (_, i) => text(i).length).reduce((a, b) => a + b))
})

test('texts come back as they were given, whatever their characters; each has its tag', () => {
  const cache = new TextCache(1000)
  const texts = ['{"description":"日本語のノード"}', 'emoji 🎨 and a lone é', '"quoted\\n" \u0000 nul', '']
  texts.forEach((text, i) => cache.set(`k${i}`, text, i * 10))
  texts.forEach((text, i) => {
    expect(cache.get(`k${i}`)).toBe(text)
    expect(cache.tag(`k${i}`)).toBe(i * 10)
  })
  expect(cache.bytes).toBe(texts.reduce((n, t) => n + Buffer.byteLength(t), 0))
  expect(cache.retag('k1', 7)).toBe(true)
  expect(cache.tag('k1')).toBe(7)
  expect(cache.get('k1')).toBe(texts[1])
  expect(cache.retag('missing', 1)).toBe(false)
  expect(cache.tag('missing')).toBeUndefined()
})

test('a replaced text is the newest: the older ones go before it, and its old bytes count no more', () => {
  const cache = new TextCache(300)
  cache.set('a', 'a'.repeat(100))
  cache.set('b', 'b'.repeat(100))
  cache.set('a', 'A'.repeat(50))
  expect(cache.bytes).toBe(150)
  cache.set('c', 'c'.repeat(100)) // fits at the end: nothing goes
  expect(held(cache, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c'])
  cache.set('d', 'd'.repeat(100)) // the front again: over a's old bytes and b
  expect(held(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd'])
  expect(cache.get('a')).toBe('A'.repeat(50))
})

test('delete and clear drop texts; the buffer takes new ones', () => {
  const cache = new TextCache(300)
  cache.set('a', 'a'.repeat(100))
  expect(cache.delete('a')).toBe(true)
  expect(cache.delete('a')).toBe(false)
  expect(cache.bytes).toBe(0)
  cache.set('b', 'b'.repeat(100))
  cache.clear()
  expect(held(cache, ['a', 'b'])).toEqual([])
  expect(cache.size).toBe(0)
  for (const k of ['c', 'd', 'e', 'f']) cache.set(k, k.repeat(100))
  expect(held(cache, ['c', 'd', 'e', 'f'])).toEqual(['d', 'e', 'f'])
})

test('once nearly full it lets in only keys missed lately, or held; a key evicted or deleted comes back at its next miss', () => {
  const cache = new TextCache(800)
  for (let i = 0; i < 7; i++) {
    expect(cache.admits(`k${i}`)).toBe(true)
    cache.set(`k${i}`, 'v'.repeat(100))
  }
  expect(cache.admits('new')).toBe(false)
  expect(cache.admits('new')).toBe(true)
  expect(cache.admits('k3')).toBe(true)
  cache.set('k7', 'v'.repeat(100))
  cache.set('k8', 'v'.repeat(100)) // k0 goes
  expect(cache.admits('k0')).toBe(true)
  expect(cache.delete('k2')).toBe(true)
  cache.set('k9', 'v'.repeat(100))
  expect(cache.admits('k2')).toBe(true)
  expect(cache.admits('never-held')).toBe(false)
  expect(new TextCache(0).admits('a')).toBe(false)
  expect(new TextCache(0).set('a', 'a')).toBe(false)
})

test('texts of no bytes are bounded too: each takes a byte of the ring, so they cannot pile up past it', () => {
  const cache = new TextCache(100)
  for (let i = 0; i < 1000; i++) cache.set(`k${i}`, '')
  expect(cache.size).toBeLessThanOrEqual(100)
  expect(cache.get('k999')).toBe('')
  expect(cache.get('k0')).toBeUndefined()
  expect(cache.bytes).toBe(0)
  // One key set again and again: the newest stays, and only it is held.
  for (let i = 0; i < 1000; i++) cache.set('same', i % 2 ? '' : 'x')
  expect(cache.get('same')).toBe('')
  expect(cache.set('full', 'f'.repeat(100))).toBe(true)
  expect(cache.size).toBe(1)
})

test('a text with a lone surrogate (no UTF-8 for it) is not kept: it would come back with U+FFFD in its place', () => {
  const cache = new TextCache(1000)
  for (const text of ['a\ud800b', '\udc00', 'end \ud83d']) {
    cache.set('k', 'before')
    cache.set('k', text)
    const got = cache.get('k')
    if (got !== undefined) expect(got).toBe(text)
  }
  expect(cache.bytes).toBe(0)
  expect(cache.set('pair', '\ud83d\ude00')).toBe(true) // a surrogate pair is one character, kept
  expect(cache.get('pair')).toBe('\ud83d\ude00')
})

test('its buffer grows only for texts it keeps: not for one larger than the bound, nor for texts cleared away', () => {
  const cache = new TextCache(1 << 20)
  expect(cache.set('huge', 'h'.repeat((1 << 20) + 1))).toBe(false)
  expect(cache.bufferBytes).toBe(0)
  // Ten texts of 10 KB at a time, cleared (a publisher changed) a hundred times: their first 100 KB are written again.
  for (let round = 0; round < 100; round++) {
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, `${round}`.padEnd(10_000, '.'))
    expect(cache.get('k0')).toBe(`${round}`.padEnd(10_000, '.'))
    cache.clear()
  }
  expect(cache.bufferBytes).toBeLessThanOrEqual(128 * 1024)
})

test('under random texts of every size (none, multi-byte, the whole ring, more), across its growth: each read is the last set', () => {
  let seed = 11
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32
  for (const bound of [1, 3, 100, 150.5, 65_537, 200_000]) {
    const cache = new TextCache(bound)
    const last = new Map<string, { text: string; tag: number }>()
    const whole = Math.floor(bound)
    for (let step = 0; step < 2000; step++) {
      const key = `k${Math.floor(random() * 20)}`
      const r = random()
      if (r < 0.7) {
        const bytes = [0, whole, whole + 1, Math.floor(random() * 40), Math.floor((random() * whole) / 3)][Math.floor(random() * 5)]!
        const char = ['a', 'é', '€', '😀'][Math.floor(random() * 4)]!
        const text = char.repeat(Math.floor(bytes / Buffer.byteLength(char)))
        const ok = cache.set(key, text, step)
        expect(ok).toBe(Buffer.byteLength(text) <= whole && whole > 0)
        if (ok) last.set(key, { text, tag: step })
        else last.delete(key)
      } else if (r < 0.8) {
        cache.delete(key)
        last.delete(key)
      } else if (r < 0.82) {
        cache.clear()
        last.clear()
      } else if (cache.retag(key, -step)) last.get(key)!.tag = -step
      let [bytes, size] = [0, 0]
      for (let i = 0; i < 20; i++) {
        const got = cache.get(`k${i}`)
        if (got === undefined) continue
        expect(got).toBe(last.get(`k${i}`)!.text)
        expect(cache.tag(`k${i}`)).toBe(last.get(`k${i}`)!.tag)
        bytes += Buffer.byteLength(got)
        size++
      }
      expect(cache.bytes).toBe(bytes)
      expect(cache.size).toBe(size)
      expect(cache.bufferBytes).toBeLessThanOrEqual(bound)
    }
  }
})

test('a bound of a fraction (half of an odd one) is its whole bytes: texts are placed at whole bytes', () => {
  const cache = new TextCache(300.5)
  expect(cache.maxBytes).toBe(300)
  for (const k of ['a', 'b', 'c', 'd']) cache.set(k, k.repeat(100))
  expect(held(cache, ['a', 'b', 'c', 'd'])).toEqual(['b', 'c', 'd'])
  expect(cache.get('d')).toBe('d'.repeat(100))
  expect(cache.bufferBytes).toBe(300)
})
