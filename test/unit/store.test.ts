import { describe, expect, test } from 'bun:test'
import { openStore } from '../../src/store/db'

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
    const db = await openStore(':memory:')
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
    const db = await openStore(':memory:')
    await expect(
      db.insertInto('access_tokens').values({ id: 'i', token_hash: 'h', user_id: 'nobody', created_at: 't' }).execute(),
    ).rejects.toThrow()
    await db.insertInto('users').values(user('u')).execute()
    const rows = await db.updateTable('users').set({ name: 'N' }).where('id', '=', 'u').returning(['id', 'name']).execute()
    expect(rows).toEqual([{ id: 'u', name: 'N' }])
    await db.destroy()
  })
})
