/**
 * A node deleted or banned on one instance while another publishes a new version of it (PostgreSQL): the publish
 * holds the node's row and reads it again in its transaction, so it is refused as it would have been a moment later
 * (409 `node_deleted`, 403 `Node Banned`). It checked the node before its transaction only, and added a pending
 * version to a node deleted or banned meanwhile, its version string taken for good.
 */
import { afterEach, expect, test } from 'bun:test'
import { publish } from '../support/app'
import { describeOnBackends, TEST_DATABASE } from '../support/backends'
import { race, twoInstances, type Setup } from '../support/publisher-race'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

describeOnBackends('a node deleted or banned while a version of it is published on another instance', () => {
  const cases = [
    { name: 'deleted', status: 409, act: (s: Setup) => s.a.call('DELETE', '/publishers/acme/nodes/pack', { token: s.alice.token }) },
    { name: 'banned', status: 403, act: (s: Setup) => s.a.call('POST', '/publishers/acme/nodes/pack/ban', { token: s.root, body: {} }) },
  ]
  for (const { name, status, act } of cases) {
    test.skipIf(!TEST_DATABASE)(`${name} first: the publish second is refused (${status})`, async () => {
      const s = await twoInstances('postgres', cleanups)
      expect((await publish(s.a, { pat: s.alice.pat, node: 'pack', version: '1.0.0' })).status).toBe(201)
      const [acted, published] = await race(
        s,
        'nodes',
        () => act(s),
        () => publish(s.b, { pat: s.alice.pat, node: 'pack', version: '2.0.0' }),
      )
      expect([acted.status, published.status]).toEqual([204, status])
      const versions = await s.other.selectFrom('node_versions').select('version').where('node_id', '=', 'pack').execute()
      expect(versions.map((v) => v.version)).toEqual(['1.0.0'])
    })
  }
})
