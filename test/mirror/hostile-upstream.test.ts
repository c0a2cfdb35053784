/** Mirroring from an upstream that is hostile rather than flaky: what it sends must cost neither the run nor our memory. */
import { afterEach, describe, expect, test } from 'bun:test'
import { makeTestApp, type TestApp } from '../support/app'
import { sync } from '../support/mirror'
import { fakeNodes, startPublicUpstream, type PublicUpstream } from '../support/public-upstream'
import { VERSION_LISTS_AT_ONCE } from '../../src/services/mirror/public-pass'

let upstream: PublicUpstream
let mirror: TestApp
afterEach(async () => {
  upstream?.stop()
  await mirror?.cleanup()
})

describe('memory', () => {
  test('a page is applied a group of version lists at a time, not after reading every list of the page', async () => {
    upstream = startPublicUpstream(fakeNodes(3 * VERSION_LISTS_AT_ONCE))
    mirror = await makeTestApp()
    const [first, last] = [upstream.nodes[0]!, upstream.nodes.at(-1)!]
    // When the last list is asked for, the first node's versions are stored already (their list no longer held).
    let firstStored: Promise<unknown> | undefined
    upstream.onRequest = (path) => {
      if (path.startsWith(`/nodes/${last.id}/versions?`))
        firstStored = mirror.deps.db.selectFrom('node_versions').select('id').where('node_id', '=', first.id).executeTakeFirst()
    }
    const summary = await sync(mirror, upstream.url)
    expect(summary).toMatchObject({ complete: true, problems: [], changed: { nodes: 3 * VERSION_LISTS_AT_ONCE } })
    expect(await firstStored).toBeDefined()
  })
})
