/** Publisher access tokens (the publish body's personal_access_token), stored as hashes. */
import type { Store } from './db'
import type { PublisherTokenRow } from './schema'

export async function insertPublisherToken(db: Store, row: PublisherTokenRow): Promise<void> {
  await db.insertInto('publisher_tokens').values(row).execute()
}

export function listPublisherTokens(db: Store, publisherId: string): Promise<PublisherTokenRow[]> {
  return db.selectFrom('publisher_tokens').selectAll().where('publisher_id', '=', publisherId).orderBy('created_at').orderBy('id').execute()
}

export async function deletePublisherToken(db: Store, publisherId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('publisher_tokens').where('publisher_id', '=', publisherId).where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function publisherTokenMatches(db: Store, publisherId: string, tokenHash: string) {
  const row = await db
    .selectFrom('publisher_tokens')
    .select('id')
    .where('publisher_id', '=', publisherId)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()
  return row !== undefined
}
