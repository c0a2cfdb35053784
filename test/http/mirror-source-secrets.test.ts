/**
 * A mirror source's address may carry a credential in a store written before `--from` and `--sync-from` refused a
 * user (2026-11-23) and a query (2026-11-24): its id is the address, and the mirrored rows keep pointing at it. The
 * pages link to that upstream, and a write refused on a mirrored node names it, to anyone: without the user, query
 * and fragment. A real sync from a registry on 127.0.0.1, with the address as such a version took it.
 */
import { afterEach, expect, test } from 'bun:test'
import { createFreshnessTracker } from '../../src/services/mirror/freshness'
import { createMirrorRuntime } from '../../src/services/mirror/runtime'
import { ensureSource, updateSource } from '../../src/store/mirror-sources'
import { addPublisher, addPublisherToken, addUser, makeTestApp, publishActive, type TestApp } from '../support/app'
import { lazyUpstream, serveTestApp, sync, type ServedApp } from '../support/mirror'
import { addresses, pageOf } from '../support/web-pages'

let t: TestApp | undefined
let upstream: ServedApp | undefined
afterEach(async () => {
  await t?.cleanup()
  await upstream?.stop()
  t = upstream = undefined
})

const TOKEN = 'dG9rZW4tb2YtdGhlLW1pcnJvcg'

/** A registry serving publisher studio with sharp-pack, mirrored by a new app from `from(its address)`. */
async function mirrored(from: (url: string) => string) {
  upstream = await serveTestApp()
  const token = await addUser(upstream, 'bob')
  await addPublisher(upstream, token, 'studio')
  const pat = await addPublisherToken(upstream, token, 'studio')
  await publishActive(upstream, { pat, publisher: 'studio', node: 'sharp-pack', version: '1.0.0', nodeFields: { name: 'Sharp' } })
  t = await makeTestApp()
  const source = from(upstream.url)
  expect(await sync(t, source)).toMatchObject({ complete: true, problems: [] })
  return { app: t, source, url: upstream.url }
}

test('synced from an address with a user and token: the pages link to the upstream without them', async () => {
  const { app, source, url } = await mirrored((url) => url.replace('http://', `http://mirror:${TOKEN}@`))
  // The row as such a version wrote it: the address is the source's id, user and token included.
  expect(await app.deps.db.selectFrom('mirror_sources').select('id').execute()).toEqual([{ id: source }])
  for (const path of ['/-/nodes/sharp-pack', '/-/publishers/studio', '/', '/-/results']) {
    const { status, html } = await pageOf(app, path)
    expect({ path, status }).toEqual({ path, status: 200 })
    expect(html).not.toContain(TOKEN)
    expect(html).not.toContain('mirror:')
  }
  const link = `<a href="${url}" rel="noopener noreferrer nofollow">${url}</a>`
  expect((await pageOf(app, '/-/nodes/sharp-pack')).html).toContain(`This node is a copy from ${link}.`)
  expect((await pageOf(app, '/-/publishers/studio')).html).toContain(`This publisher is a copy from ${link}.`)
  expect((await pageOf(app, '/')).html).toContain(`Mirrored from <span>${url.replace('http://', '')}</span>`)
})

test('a write refused on a mirrored node names its upstream without the user and token', async () => {
  const { app, url } = await mirrored((url) => url.replace('http://', `http://mirror:${TOKEN}@`))
  const review = await app.call('POST', '/nodes/sharp-pack/reviews?star=5') // anyone may send this
  expect(review.status).toBe(403)
  expect(review.body).toEqual({
    error: 'mirrored_read_only',
    message: `node "sharp-pack" is mirrored from ${url}: it is read-only here`,
  })
})

test('a source address with a query and a fragment: linked without them, in the page and the footer', async () => {
  const { app, url } = await mirrored((url) => url)
  const secret = `${url.replace('http://', `http://mirror:${TOKEN}@`)}/base?token=${TOKEN}#${TOKEN}`
  const now = app.clock.now.toISOString()
  await ensureSource(app.deps.db, secret, 'feed', now)
  await updateSource(app.deps.db, secret, { last_success_at: now })
  await app.deps.db.updateTable('nodes').set({ mirror_source_id: secret }).where('id', '=', 'sharp-pack').execute()
  // Followed as well (the footer of every page names the upstream serve follows).
  const freshness = createFreshnessTracker(app.deps, { preferred: secret, staleAfterMs: 10 * 60_000 })
  await freshness.refresh()
  app.deps.mirror = createMirrorRuntime(lazyUpstream(app), () => freshness.current(), secret)

  const { html } = await pageOf(app, '/-/nodes/sharp-pack')
  expect(html).not.toContain(TOKEN)
  const shown = `${url}/base`
  expect(html).toContain(`This node is a copy from <a href="${shown}" rel="noopener noreferrer nofollow">${shown}</a>.`)
  expect(html).toContain(`Mirror of <a href="${shown}" rel="noopener noreferrer nofollow">${shown}</a>:`)
  expect(addresses(html).filter((a) => a.startsWith('http'))).toEqual([shown, shown])
  expect((await pageOf(app, '/')).html).not.toContain(TOKEN)
})
