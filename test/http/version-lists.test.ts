/** GET /nodes/{id}/versions: remembered per node and question until a write touches the node or any of its versions. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { commitWrite } from '../../src/services/changes'
import { aliceWithPublisher, makeTestApp, publish, publishActive, upload, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

const versions = async (query = '') => (await t.call('GET', `/nodes/pack/versions${query}`)).body as Record<string, unknown>[]

/** Changes a version's changelog behind the registry's back: no write tells the caches. */
const editUntold = (id: string, changelog: string) =>
  t.deps.db.updateTable('node_versions').set({ changelog }).where('id', '=', id).execute()

describe('version lists remembered', () => {
  test('are answered from memory until a write: a publish, an upload, a deprecation, a change to an older version', async () => {
    const { pat, token } = await aliceWithPublisher(t)
    const v1 = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    expect((await versions()).map((v) => v.version)).toEqual(['1.0.0'])
    await editUntold(v1.id, 'untold')
    expect((await versions())[0]!.changelog).not.toBe('untold') // remembered: the store was not read again

    // A publish: the pending version shows, without an archive yet; the edit made meanwhile shows too (read again).
    const pending = await publish(t, { pat, node: 'pack', version: '1.1.0' })
    const listed = await versions()
    expect(listed.map((v) => [v.version, v.status, v.downloadUrl])).toEqual([
      ['1.1.0', 'NodeVersionStatusPending', ''],
      ['1.0.0', 'NodeVersionStatusActive', expect.stringContaining('/1.0.0/node.zip')],
    ])
    expect(listed[1]!.changelog).toBe('untold')

    // Its upload: active, with its download link.
    expect((await upload(t, pending.body.signedUrl)).status).toBe(200)
    expect((await versions())[0]).toMatchObject({
      status: 'NodeVersionStatusActive',
      downloadUrl: expect.stringContaining('/1.1.0/node.zip'),
    })

    // A deprecation of the older version, by its publisher.
    const deprecate = await t.call('PUT', `/publishers/acme/nodes/pack/versions/${v1.id}`, { token, body: { deprecated: true } })
    expect(deprecate.status).toBe(200)
    expect((await versions())[1]!.deprecated).toBe(true)

    // A status change the node itself does not show (not its latest version).
    await commitWrite(t.deps, async (w) => {
      await w.db.updateTable('node_versions').set({ status: 'banned' }).where('id', '=', v1.id).execute()
      w.version(v1.id, 'pack', { nodeUnchanged: true })
    })
    expect((await versions()).map((v) => v.version)).toEqual(['1.1.0'])
  })

  test('each question is its own answer (statuses, reasons shown), and a ban of the node refuses them all', async () => {
    const { pat } = await aliceWithPublisher(t)
    const v1 = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    await commitWrite(t.deps, async (w) => {
      await w.db.updateTable('node_versions').set({ status: 'flagged', status_reason: 'looks odd' }).where('id', '=', v1.id).execute()
      w.version(v1.id, 'pack')
    })
    expect(await versions('?statuses=NodeVersionStatusActive')).toEqual([])
    expect((await versions('?statuses=NodeVersionStatusFlagged'))[0]!.status_reason).toBe('')
    expect((await versions('?statuses=NodeVersionStatusFlagged&include_status_reason=true'))[0]!.status_reason).toBe('looks odd')
    expect((await t.call('GET', '/nodes/PACK/versions')).body).toHaveLength(1) // any case, as the node is found
    await commitWrite(t.deps, async (w) => {
      await w.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'pack').execute()
      w.node('pack')
    })
    for (const query of ['', '?statuses=NodeVersionStatusFlagged&include_status_reason=true'])
      expect((await t.call('GET', `/nodes/pack/versions${query}`)).status).toBe(403)
  })
})
