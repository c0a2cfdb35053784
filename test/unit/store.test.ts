import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { openStore } from '../../src/store/db'
import schemaSql from '../../schema.sql' with { type: 'text' }

const user = (id: string) => ({
  id,
  email: '',
  name: '',
  is_admin: 0,
  is_approved: 1,
  status: 'active' as const,
  created_at: 't',
  updated_at: 't',
})

describe('openStore', () => {
  test('commits a transaction and rolls one back on error', async () => {
    const db = openStore(':memory:')
    await db.transaction().execute((trx) => trx.insertInto('users').values(user('kept')).execute())
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values(user('dropped')).execute()
        throw new Error('abort')
      }),
    ).rejects.toThrow('abort')
    expect((await db.selectFrom('users').select('id').execute()).map((r) => r.id)).toEqual(['kept'])
    await db.destroy()
  })

  test('enforces foreign keys and returns rows from RETURNING', async () => {
    const db = openStore(':memory:')
    await expect(db.insertInto('access_tokens').values({ token_hash: 'h', user_id: 'nobody', created_at: 't' }).execute()).rejects.toThrow()
    await db.insertInto('users').values(user('u')).execute()
    const rows = await db.updateTable('users').set({ name: 'N' }).where('id', '=', 'u').returning(['id', 'name']).execute()
    expect(rows).toEqual([{ id: 'u', name: 'N' }])
    await db.destroy()
  })

  test('schema.sql applies twice without change (idempotent)', () => {
    const sqlite = new Database(':memory:')
    sqlite.run(schemaSql)
    const before = sqlite.query('select sql from sqlite_master order by name').all()
    sqlite.run(schemaSql)
    expect(sqlite.query('select sql from sqlite_master order by name').all()).toEqual(before)
  })
})
