/** GET /changes: the feed downstream mirrors follow. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { aliceWithPublisher, makeTestApp, publish, publishActive, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('GET /changes', () => {
  test('lists each entity once, at its latest change, as a public GET renders it', async () => {
    const { pat } = await aliceWithPublisher(t)
    const v1 = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const feed = (await t.call('GET', '/changes')).body
    const instance = (await t.deps.db.selectFrom('registry_instance').select('instance_id').executeTakeFirstOrThrow()).instance_id
    expect(feed).toMatchObject({ instance, next: feed.head })
    expect(feed.changes.map((c: any) => [c.kind, c.id, c.op])).toEqual([
      ['publisher', 'acme', 'upsert'],
      ['node', 'pack', 'upsert'],
      ['version', v1.id, 'upsert'],
    ])
    const [publisher, node, version] = feed.changes
    expect(node.entity).toEqual((await t.call('GET', '/nodes/pack')).body)
    expect(version.entity).toEqual((await t.call('GET', '/nodes/pack/versions/1.0.0')).body)
    expect(publisher.entity).toEqual((await t.call('GET', '/publishers/acme')).body) // anonymous: no member emails
    expect(publisher.entity.members[0].user.email).toBeUndefined()
    expect(version.host_nodes).toEqual(['ImageBlur', 'ImageSharpen'])
    expect(version.archive).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), size: expect.any(Number) })
    expect(feed.changes.map((c: any) => c.serial)).toEqual(
      [...feed.changes.map((c: any) => c.serial)].sort((a: number, b: number) => a - b),
    )
  })

  test('pages with since and limit; next continues, head says how far there is to go', async () => {
    const { pat } = await aliceWithPublisher(t)
    for (const node of ['a', 'b', 'c']) await publish(t, { pat, node, version: '1.0.0' })
    const all = (await t.call('GET', '/changes?limit=1000')).body
    const first = (await t.call('GET', '/changes?since=0&limit=2')).body
    expect(first.changes).toEqual(all.changes.slice(0, 2))
    expect(first.next).toBe(all.changes[1].serial)
    expect(first.head).toBe(all.head)
    const rest = (await t.call('GET', `/changes?since=${first.next}&limit=1000`)).body
    expect(rest.changes).toEqual(all.changes.slice(2))
    const end = (await t.call('GET', `/changes?since=${all.head}`)).body
    expect(end).toMatchObject({ changes: [], next: all.head, head: all.head })
    expect((await t.call('GET', '/changes?limit=1000000')).status).toBe(200) // clamped, not refused
    expect((await t.call('GET', '/changes?since=-1')).status).toBe(400)
    expect((await t.call('GET', '/changes?since=abc')).body.error).toBe('bad_request')
  })

  test('a page longer than what is rendered at once (100) renders every entry, as short pages of it do', async () => {
    const { pat } = await aliceWithPublisher(t)
    const { commitWrite } = await import('../../src/services/changes')
    await commitWrite(t.deps, async (w) => {
      for (let i = 0; i < 300; i++) {
        const id = `p${String(i).padStart(3, '0')}`
        await w.db.insertInto('publishers').values({ id, name: id.toUpperCase(), created_at: w.now, updated_at: w.now }).execute()
        w.publisher(id)
      }
    })
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const whole = (await t.call('GET', '/changes?limit=1000')).body.changes
    expect(whole).toHaveLength(303) // acme, the 300, then pack and its version (acme moved to its latest change)
    expect(whole.filter((c: any) => c.op !== 'upsert')).toEqual([])
    expect(whole.slice(-3).map((c: any) => c.kind)).toEqual(['publisher', 'node', 'version'])
    const pieces: unknown[] = []
    for (let since = 0; ;) {
      const page = (await t.call('GET', `/changes?since=${since}&limit=100`)).body
      if (!page.changes.length) break
      pieces.push(...page.changes)
      since = page.next
    }
    expect(whole).toEqual(pieces)
  })

  test('a ban carries the banned entity; a deletion is a tombstone without one', async () => {
    const { pat } = await aliceWithPublisher(t)
    const v1 = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await publishActive(t, { pat, node: 'gone', version: '1.0.0' })
    const { commitWrite } = await import('../../src/services/changes')
    await commitWrite(t.deps, async (w) => {
      await w.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'pack').execute()
      await w.db.updateTable('node_versions').set({ status: 'deleted' }).where('id', '=', v1.id).execute()
      await w.db.updateTable('nodes').set({ status: 'deleted' }).where('id', '=', 'gone').execute()
      w.node('pack')
      w.version(v1.id, 'pack')
      w.node('gone')
    })
    const changes = (await t.call('GET', '/changes')).body.changes
    const byId = new Map(changes.map((c: any) => [c.id, c]))
    expect(byId.get('pack')).toMatchObject({ op: 'ban', entity: { id: 'pack', status: 'NodeStatusBanned' } })
    expect(byId.get(v1.id)).toEqual({ serial: expect.any(Number), kind: 'version', id: v1.id, op: 'delete' })
    expect(byId.get('gone')).toEqual({ serial: expect.any(Number), kind: 'node', id: 'gone', op: 'delete' })
  })
})

describe('GET /changes after the lifecycle routes', () => {
  test('a publisher deleted through its route is a tombstone', async () => {
    const { token } = await aliceWithPublisher(t)
    expect((await t.call('DELETE', '/publishers/acme', { token })).status).toBe(204)
    const changes = (await t.call('GET', '/changes')).body.changes
    expect(changes.find((c: any) => c.kind === 'publisher' && c.id === 'acme')).toEqual({
      serial: expect.any(Number),
      kind: 'publisher',
      id: 'acme',
      op: 'delete',
    })
  })
})
