/** What instances on one database share: named secrets, made once by whichever asks first, and rate limit windows. */
import type { Store } from './db'

/** The secret called `name`: `make()`'s value if none exists yet, else the one stored first (also when others race). */
export async function sharedSecret(db: Store, name: string, make: () => string, now: string): Promise<string> {
  await db
    .insertInto('registry_secrets')
    .values({ name, value: make(), created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  return (await db.selectFrom('registry_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow()).value
}

/**
 * Counts one event for `key` in its fixed window, in one statement (the row's lock orders racing instances): a
 * window that started at or before `expiredAt` starts over at `now`. Returns the window's start and its count.
 */
export function countRateEvent(
  db: Store,
  key: string,
  now: string,
  expiredAt: string,
): Promise<{ window_started_at: string; count: number }> {
  return db
    .insertInto('rate_limits')
    .values({ key, window_started_at: now, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => ({
        count: eb
          .case()
          .when('rate_limits.window_started_at', '<=', expiredAt)
          .then(1)
          .else(eb('rate_limits.count', '+', 1))
          .end(),
        window_started_at: eb
          .case()
          .when('rate_limits.window_started_at', '<=', expiredAt)
          .then(now)
          .else(eb.ref('rate_limits.window_started_at'))
          .end(),
      })),
    )
    .returning(['window_started_at', 'count'])
    .executeTakeFirstOrThrow()
}

/** Removes windows that started at or before `before` (they would start over anyway); returns how many. */
export async function dropRateWindows(db: Store, before: string): Promise<number> {
  const result = await db.deleteFrom('rate_limits').where('window_started_at', '<=', before).executeTakeFirst()
  return Number(result.numDeletedRows)
}
