/** Upstream entities as mirror items: what is read of fields an upstream may fill with anything. */
import { describe, expect, test } from 'bun:test'
import { nodeItem } from '../../src/domain/mirror-items'

describe('counters', () => {
  test('downloads, stars and ranking are non-negative safe integers; any other number reads as 0, like a missing one', () => {
    const read = (value: number) => {
      const n = nodeItem({ id: 'pack', downloads: value, search_ranking: value, repohost_stars: value }, 'acme')
      return [n.downloads, n.search_ranking, n.repohost_stars]
    }
    expect(read(42)).toEqual([42, 42, 42])
    expect(read(0)).toEqual([0, 0, 0])
    for (const bad of [1e308, -1e308, -3, 2.5, Number.MAX_SAFE_INTEGER + 2]) expect(read(bad)).toEqual([0, 0, 0])
    expect(nodeItem({ id: 'pack', github_stars: 7 }, 'acme').repohost_stars).toBe(7) // the upstream's spelling
  })

  test('a rating is 0 to 5 stars (the pages show it as "4.5 of 5"); any other number reads as 0, like a missing one', () => {
    const rating = (value: unknown) => nodeItem({ id: 'pack', rating: value } as never, 'acme').rating
    expect([rating(4.5), rating(5), rating(0), rating(undefined)]).toEqual([4.5, 5, 0, 0])
    for (const bad of [5.01, 1e308, -1, -1e308, '4']) expect(rating(bad)).toBe(0)
  })

  test('a count past what every backend stores (a 32-bit integer on PostgreSQL) is kept at its top, not lost with the batch', () => {
    const n = nodeItem({ id: 'pack', downloads: 3_000_000_000, search_ranking: 2 ** 31, repohost_stars: Number.MAX_SAFE_INTEGER }, 'acme')
    expect([n.downloads, n.search_ranking, n.repohost_stars]).toEqual([2_147_483_647, 2_147_483_647, 2_147_483_647])
  })
})
