import { afterEach, describe, expect, test } from 'bun:test'
import { createSharedRateLimiter } from '../../src/services/rate-limit'
import { openStore, type Store } from '../../src/store/db'
import { dropRateWindows, sharedSecret } from '../../src/store/shared-state'

let db: Store
afterEach(() => db?.destroy())

const T = Date.parse('2026-01-02T00:00:00.000Z')

describe('state instances share through the store', () => {
  test('rate limits count per registry: two limiters on one store share each key, not each other keys', async () => {
    db = await openStore(':memory:')
    const a = createSharedRateLimiter(db, 'review', 2, 60_000)
    const b = createSharedRateLimiter(db, 'review', 2, 60_000)
    const other = createSharedRateLimiter(db, 'video-start', 2, 60_000)
    expect(await a('1.2.3.4', T)).toBe(0)
    expect(await b('1.2.3.4', T + 1000)).toBe(0)
    expect(await a('1.2.3.4', T + 2000)).toBe(58_000) // the window started at T
    expect(await b('5.6.7.8', T + 2000)).toBe(0)
    expect(await other('1.2.3.4', T + 2000)).toBe(0)
    expect(await b('1.2.3.4', T + 60_000)).toBe(0) // a new window
    expect(await dropRateWindows(db, new Date(T + 30_000).toISOString())).toBe(2)
  })

  test('a secret is made once: whoever asks later gets the first one', async () => {
    db = await openStore(':memory:')
    const now = new Date(T).toISOString()
    expect(await sharedSecret(db, 'url-signing', () => 'first', now)).toBe('first')
    expect(await sharedSecret(db, 'url-signing', () => 'second', now)).toBe('first')
  })
})
