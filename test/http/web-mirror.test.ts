/** The web pages of a mirror: where mirrored nodes and publishers came from, how fresh, under a path prefix too. */
import { afterEach, describe, expect, test } from 'bun:test'
import { createReadStream, createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { createFreshnessTracker } from '../../src/services/mirror/freshness'
import { exportBundle, importBundle } from '../../src/services/mirror/bundle'
import { createMirrorRuntime } from '../../src/services/mirror/runtime'
import { ensureSource, updateSource } from '../../src/store/mirror-sources'
import { addPublisher, addPublisherToken, addUser, aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { lazyUpstream, serveTestApp, sync, type ServedApp } from '../support/mirror'
import { tempDirs } from '../support/tmp'
import { addresses, escaped, HOSTILE, pageOf, seedPages } from '../support/web-pages'
import { namesTable, watchQueries } from '../support/watch-queries'

let t: TestApp
let upstream: ServedApp | undefined
const dirs = tempDirs('web-mirror')
afterEach(async () => {
  await t?.cleanup()
  await upstream?.stop()
  upstream = undefined
  dirs.cleanup()
})

const page = (path: string, init?: RequestInit) => pageOf(t, path, init)

/** Another registry, serving publisher studio with sharp-pack and soft-pack, that `target` syncs from. */
async function mirrorStudio(target: TestApp): Promise<string> {
  upstream = await serveTestApp()
  const token = await addUser(upstream, 'bob')
  await addPublisher(upstream, token, 'studio')
  const pat = await addPublisherToken(upstream, token, 'studio')
  for (const node of ['sharp-pack', 'soft-pack']) {
    await publishActive(upstream, { pat, publisher: 'studio', node, version: '1.0.0', nodeFields: { name: node } })
  }
  expect(await sync(target, upstream.url)).toMatchObject({ complete: true, problems: [] })
  return upstream.url
}

/** Whether each card of a list says where its node came from, by node id. */
const cardOrigins = (html: string) =>
  Object.fromEntries(
    html
      .split('<li class="card panel">')
      .slice(1)
      .map((card) => [card.match(/<h3 id="node-([^"]+)">/)![1], card.includes('<li class="origin">')]),
  )

/** Counts the statements that name this table or column, from here on. */
function countQueries(target: TestApp, name: string) {
  const counter = { count: 0 }
  target.deps.db = watchQueries(target.deps.db, (query) => {
    if (namesTable(query, name)) counter.count++
  })
  return counter
}

const HOUR = 3600_000

describe('mirrored nodes and publishers', () => {
  test('say where they came from and when it was last synced, in one lookup per page; local ones say nothing of it', async () => {
    t = await makeTestApp()
    await seedPages(t)
    const url = await mirrorStudio(t)
    const syncedAt = t.clock.now.toISOString()
    t.clock.now = new Date(t.clock.now.getTime() + 3 * HOUR + 20 * 60_000)
    const origins = countQueries(t, 'mirror_source_id') // origins are looked up by their rows' source
    const time = `<time datetime="${syncedAt}" title="2026-01-02 03:04:05 UTC">3 hours ago</time>`

    const node = await page('/-/nodes/sharp-pack')
    expect(origins.count).toBe(1)
    expect(node.html.match(/<h1[ >]/g)).toHaveLength(1)
    expect(node.html).toContain('<section class="origin panel" aria-labelledby="origin-heading"><h2 id="origin-heading">Mirrored node</h2>')
    expect(node.html).toContain(
      `This node is a copy from <a href="${url}" rel="noopener noreferrer nofollow">${url}</a>. It was last synced ${time}.`,
    )
    expect(node.html).toContain(
      '<span class="badge neutral">Not followed</span> This server does not follow it now: this copy changes only when an operator syncs from it again.',
    )
    // Not following anything, the footer says nothing of a mirror.
    expect(node.html).not.toContain('mirror-status')

    const line = `<li class="origin">Mirrored from <span>${url.replace('http://', '')}</span>, synced ${time}</li>`
    origins.count = 0
    const publisher = await page('/-/publishers/studio')
    expect(origins.count).toBe(2) // the publisher, then its page of nodes
    expect(publisher.html).toContain('<h2 id="origin-heading">Mirrored publisher</h2>')
    expect(publisher.html).toContain(`This publisher is a copy from <a href="${url}" rel="noopener noreferrer nofollow">`)
    expect(publisher.html).toContain(line)

    for (const path of ['/', '/-/results']) {
      origins.count = 0
      const { html } = await page(path)
      expect({ path, lookups: origins.count }).toEqual({ path, lookups: 1 })
      expect(cardOrigins(html)).toEqual({
        'blur-pack': false,
        'linux-tools': false,
        'sharp-pack': true,
        'soft-pack': true,
        'upscale-kit': false,
      })
      expect(html).toContain(line)
    }

    for (const path of ['/-/nodes/blur-pack', '/-/publishers/acme']) {
      const { html } = await page(path)
      expect(html).not.toContain('Mirror')
      expect(html).not.toContain('class="origin')
    }
  })

  test('followed by serve --sync-from: up to date, stale, unreachable in words, and the footer tells the registry state', async () => {
    t = await makeTestApp()
    const url = await mirrorStudio(t)
    const syncedAt = t.clock.now.toISOString()
    const freshness = createFreshnessTracker(t.deps, { preferred: url, staleAfterMs: 10 * 60_000 })
    await freshness.refresh()
    t.deps.mirror = createMirrorRuntime(lazyUpstream(t), () => freshness.current(), url)
    const link = `<a href="${url}" rel="noopener noreferrer nofollow">${url}</a>`
    const at = (iso: string, words: string) => `<time datetime="${iso}" title="${iso.slice(0, 19).replace('T', ' ')} UTC">${words}</time>`

    let node = (await page('/-/nodes/sharp-pack')).html
    expect(node).toContain('<span class="badge good">Up to date</span> This server follows it and its last sync succeeded in time.')
    expect(node).toContain(
      `<p class="mirror-status">Mirror of ${link}: synced ${at(syncedAt, 'just now')} <span class="badge good">Up to date</span></p>`,
    )
    // A card shows the state only when it is not fine.
    expect((await page('/')).html).toContain(`, synced ${at(syncedAt, 'just now')}</li>`)

    t.clock.now = new Date(t.clock.now.getTime() + 11 * 60_000)
    node = (await page('/-/nodes/sharp-pack')).html
    expect(node).toContain(
      '<span class="badge warn">Stale</span> This server follows it, but has not synced with it successfully for too long: this copy may be behind.',
    )
    expect(node).toContain(`Mirror of ${link}: synced ${at(syncedAt, '11 minutes ago')} <span class="badge warn">Stale</span>`)
    expect((await page('/')).html).toContain(`, synced ${at(syncedAt, '11 minutes ago')} <span class="badge warn">Stale</span></li>`)

    upstream!.server.stop(true)
    expect(await sync(t, url)).toMatchObject({ complete: false, unreachable: true })
    const triedAt = t.clock.now.toISOString()
    await freshness.refresh({ source: url, unreachable: true, attemptedAt: triedAt, error: 'cannot connect' })
    node = (await page('/-/nodes/sharp-pack')).html
    expect(node).toContain(`It was last synced ${at(syncedAt, '11 minutes ago')}.`)
    expect(node).toContain(
      `<span class="badge bad">Upstream unreachable</span> This server follows it, but could not reach it at its last try, ${at(triedAt, 'just now')}: this copy may be behind.`,
    )
    expect(node).toContain('<span class="badge bad">Upstream unreachable</span></p>')
  })

  test('an imported bundle is named as one, with the registry that exported it', async () => {
    const origin = await makeTestApp()
    try {
      const { pat } = await aliceWithPublisher(origin)
      await publishActive(origin, { pat, node: 'pack', version: '1.0.0' })
      const file = join(dirs.make(), 'bundle.tar')
      await exportBundle(origin.deps, 0, createWriteStream(file))
      t = await makeTestApp()
      t.clock.now = new Date(t.clock.now.getTime() - 2 * 24 * HOUR)
      expect(await importBundle(t.deps, () => createReadStream(file))).toMatchObject({ complete: true })
      t.clock.now = new Date(t.clock.now.getTime() + 2 * 24 * HOUR)
      const { instance_id } = await origin.deps.db.selectFrom('registry_instance').select('instance_id').executeTakeFirstOrThrow()
      const node = (await page('/-/nodes/pack')).html
      expect(node).toContain(
        `This node is a copy from an imported bundle (exported by registry <code>${instance_id}</code>). It was last imported <time`,
      )
      expect(node).toContain('>2 days ago</time>.')
      expect(node).toContain('this copy changes only when an operator imports another bundle.')
      expect((await page('/')).html).toMatch(
        /<li class="origin">Mirrored from <span>an imported bundle<\/span>, imported <time [^>]+>2 days ago<\/time><\/li>/,
      )
    } finally {
      await origin.cleanup()
    }
  })

  test('an upstream address or instance id from elsewhere shows as text, and is linked only when it is http(s)', async () => {
    t = await makeTestApp()
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'evil-origin', version: '1.0.0' })
    await publishActive(t, { pat, node: 'evil-bundle', version: '1.0.0' })
    const now = t.clock.now.toISOString()
    const sources = {
      script: `javascript:alert(1)//${HOSTILE}`,
      bundle: `bundle:${HOSTILE}`,
      quote: 'https://up.example/"onmouseover="alert(4)',
    }
    for (const id of Object.values(sources)) {
      await ensureSource(t.deps.db, id, id.startsWith('bundle:') ? 'bundle' : 'feed', now)
      await updateSource(t.deps.db, id, { last_success_at: now, upstream_instance: HOSTILE })
    }
    // Mirrored from these sources, as a sync records it on the rows.
    for (const [id, source] of [
      ['evil-origin', sources.script],
      ['evil-bundle', sources.bundle],
    ])
      await t.deps.db.updateTable('nodes').set({ mirror_source_id: source, mirror_status: 'active' }).where('id', '=', id!).execute()
    await t.deps.db
      .updateTable('publishers')
      .set({ mirror_source_id: sources.quote, mirror_status: 'active' })
      .where('id', '=', 'acme')
      .execute()
    for (const path of ['/-/nodes/evil-origin', '/-/nodes/evil-bundle', '/', '/-/results', '/-/publishers/acme']) {
      const { status, html } = await page(path)
      expect({ path, status }).toEqual({ path, status: 200 })
      expect(html).not.toContain('<script>alert')
      expect(html).not.toContain('<img src=x')
      expect(html).not.toContain('href="javascript:')
      expect(html).not.toContain('"onmouseover="')
    }
    expect((await page('/-/nodes/evil-origin')).html).toContain(`This node is a copy from <span>javascript:alert(1)//${escaped}</span>.`)
    expect((await page('/')).html).toContain(`Mirrored from <span>javascript:alert(1)//${escaped}</span>`)
    expect((await page('/-/nodes/evil-bundle')).html).toContain(`an imported bundle (exported by registry <code>${escaped}</code>)`)
    expect((await page('/-/publishers/acme')).html).toContain(
      'This publisher is a copy from <a href="https://up.example/&quot;onmouseover=&quot;alert(4)" rel="noopener noreferrer nofollow">',
    )
  })
})

describe('under --public-url with a path prefix', () => {
  test('a mirrored node and the mirror state in the footer link only to the upstream besides pages under the prefix', async () => {
    t = await makeTestApp({ settings: { publicUrl: 'https://example.org/tools/registry' } })
    const url = await mirrorStudio(t)
    const freshness = createFreshnessTracker(t.deps, { preferred: url, staleAfterMs: 10 * 60_000 })
    await freshness.refresh()
    t.deps.mirror = createMirrorRuntime(lazyUpstream(t), () => freshness.current(), url)
    for (const path of ['/-/nodes/sharp-pack', '/-/publishers/studio', '/']) {
      const { html } = await page(path)
      expect(html).toContain('Mirror of')
      expect(html).toContain('class="origin')
      const outside = addresses(html).filter((a) => !a.startsWith('#') && !a.startsWith('/tools/registry/'))
      expect({ path, outside: [...new Set(outside)] }).toEqual({ path, outside: [url] })
    }
  })
})
