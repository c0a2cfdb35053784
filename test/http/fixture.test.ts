/** Loading a CI fixture: every kind of entity, fixed tokens that work, archives served and inspected, idempotent reloads. */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { stableUuid } from '../../src/domain/ids'
import { loadFixture } from '../../src/services/fixture'
import { feedPosition } from '../../src/store/changes'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, PUBLIC_URL, type TestApp } from '../support/app'

const EXAMPLE = readFileSync(new URL('../fixtures/example-fixture.json', import.meta.url), 'utf8')
const example = () => JSON.parse(EXAMPLE)
const TOKENS = {
  alice: 'ci-token-alice-0000000000000001',
  bob: 'ci-token-bob-00000000000000002',
  root: 'ci-token-admin-000000000000003',
  mallory: 'ci-token-mallory-0000000000004',
  pat: 'ci-pat-acme-00000000000000001',
}
const archiveOf = (version: string) =>
  new Uint8Array(Buffer.from(example().nodes[0].versions.find((v: any) => v.version === version).archive_base64, 'base64'))

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

async function load(fixture: unknown = example()) {
  const result = await loadFixture(t.deps, typeof fixture === 'string' ? fixture : JSON.stringify(fixture), 'test.json')
  if (!result.ok) throw new Error(result.problems.join('\n'))
  return result.summary
}

const rowCounts = async () => {
  const tables = [
    'users',
    'access_tokens',
    'publishers',
    'publisher_members',
    'publisher_tokens',
    'nodes',
    'node_versions',
    'archives',
    'host_nodes',
    'changes',
    'audit_log',
  ] as const
  const counts: Record<string, number> = {}
  for (const table of tables)
    counts[table] = Number(
      (
        await t.deps.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return counts
}

describe('loading the example fixture', () => {
  test('users, with fixed tokens that authenticate; an admin; a banned user', async () => {
    expect(await load()).toMatchObject({
      users: 4,
      publishers: 2,
      nodes: 3,
      versions: 5,
      archives: 2,
      created: 14,
      updated: 0,
      unchanged: 0,
    })
    expect((await t.call('GET', '/users', { token: TOKENS.alice })).body).toEqual({
      id: 'alice',
      email: 'alice@example.com',
      name: 'Alice',
      isAdmin: false,
      isApproved: true,
    })
    expect((await t.call('GET', '/users', { token: TOKENS.bob })).body).toMatchObject({ id: 'bob', email: 'bob@example.com', name: 'Bob' })
    expect((await t.call('GET', '/users', { token: TOKENS.root })).body).toMatchObject({ id: 'root', isAdmin: true })
    const banned = await t.call('POST', '/publishers', { token: TOKENS.mallory, body: { id: 'new', name: 'New' } })
    expect(banned).toMatchObject({ status: 403, body: { error: 'user_banned' } })
    // Tokens are kept as hashes only.
    const stored = await t.deps.db.selectFrom('access_tokens').select('token_hash').execute()
    expect(JSON.stringify(stored)).not.toContain('ci-token')
  })

  test('publishers with members, and a publisher token the publishing CLI can use', async () => {
    await load()
    const acme = (await t.call('GET', '/publishers/acme', { token: TOKENS.alice })).body
    expect(acme).toMatchObject({ id: 'acme', name: 'Acme Nodes', description: 'Image filters for CI', website: 'https://acme.example' })
    expect(acme.createdAt).toBe('2026-01-01T00:00:00.000Z')
    expect(acme.members.map((m: any) => [m.user.id, m.role])).toEqual([
      ['alice', 'owner'],
      ['bob', 'member'],
    ])
    expect((await t.call('GET', '/publishers')).body.map((p: any) => p.id)).toEqual(['acme'])
    expect((await t.call('GET', '/publishers', { token: TOKENS.root })).body.map((p: any) => [p.id, p.status])).toEqual([
      ['acme', 'PublisherStatusActive'],
      ['shady', 'PublisherStatusBanned'],
    ])
    const tokens = (await t.call('GET', '/publishers/acme/tokens', { token: TOKENS.alice })).body
    expect(tokens).toEqual([
      { id: expect.any(String), name: 'publish', description: '', createdAt: '2026-01-01T00:00:00.000Z', token: 'ci-p***' },
    ])
    const version = await publishActive(t, { pat: TOKENS.pat, node: 'blur-pack', version: '1.2.0' })
    expect(version).toMatchObject({ version: '1.2.0', status: 'NodeVersionStatusActive' })
    expect((await t.call('PUT', '/publishers/acme', { token: TOKENS.bob, body: { name: 'x' } })).body.error).toBe('permission_denied')
  })

  test('nodes with their fields, counters and status, and latest_version as after publishing', async () => {
    await load()
    const node = (await t.call('GET', '/nodes/blur-pack')).body
    expect(node).toMatchObject({
      id: 'blur-pack',
      name: 'Blur Pack',
      author: 'Alice',
      license: '{"file": "LICENSE"}',
      repository: 'https://github.com/acme/blur-pack',
      tags: ['image', 'filter'],
      supported_os: ['OS Independent'],
      repohost_stars: 42,
      github_stars: 42,
      downloads: 1000,
      status: 'NodeStatusActive',
      created_at: '2026-01-01T00:00:00.000Z',
      publisher: { id: 'acme', name: 'Acme Nodes' },
      latest_version: { version: '1.0.0', status: 'NodeVersionStatusActive', id: stableUuid('version:blur-pack@1.0.0') },
    })
    expect((await t.call('GET', '/nodes/upscale-tools')).body).toMatchObject({ name: 'Upscale Tools', search_ranking: 5 })
    expect((await t.call('GET', '/nodes/old-pack')).status).toBe(403)
    expect((await t.call('GET', '/nodes?include_banned=true')).body.nodes.map((n: any) => n.id).sort()).toEqual([
      'blur-pack',
      'old-pack',
      'upscale-tools',
    ])
  })

  test('versions with their statuses; host nodes given or extracted; search finds them', async () => {
    await load()
    const versions = (await t.call('GET', '/nodes/blur-pack/versions?include_status_reason=true')).body
    expect(versions.map((v: any) => [v.version, v.status, v.status_reason])).toEqual([
      ['1.1.0-rc.1', 'NodeVersionStatusPending', ''],
      ['1.0.0', 'NodeVersionStatusActive', ''],
      ['0.9.0', 'NodeVersionStatusFlagged', 'ships a path outside the pack'],
    ])
    expect(versions[1]).toMatchObject({ changelog: 'First release', dependencies: ['numpy'], host_node_extract_status: 'success' })
    expect(versions[2].host_node_extract_status).toBe('failed')
    expect((await t.call('GET', '/nodes/blur-pack/versions/1.0.0/host-nodes')).body.host_nodes).toEqual(['ImageBlur', 'ImageSharpen'])
    expect((await t.call('GET', '/nodes/upscale-tools/versions/2.0.0')).body).toMatchObject({ deprecated: true, downloadUrl: '' })
    expect((await t.call('GET', '/nodes/upscale-tools/versions/2.0.0/host-nodes')).body.host_nodes).toEqual([
      'UpscaleImage',
      'UpscaleLatent',
    ])
    expect((await t.call('GET', '/nodes/search?host_node_search=UpscaleLatent')).body.nodes.map((n: any) => n.id)).toEqual([
      'upscale-tools',
    ])
    expect((await t.call('GET', '/host-nodes/ImageBlur/node')).body.id).toBe('blur-pack')
  })

  test('archives are downloadable byte for byte; the flagged one only by its publisher', async () => {
    await load()
    const install = (await t.call('GET', '/nodes/blur-pack/install')).body
    expect(install).toMatchObject({ version: '1.0.0', downloadUrl: `${PUBLIC_URL}/archives/acme/blur-pack/1.0.0/node.zip` })
    const download = await t.app.request('/archives/acme/blur-pack/1.0.0/node.zip')
    const bytes = archiveOf('1.0.0')
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes)
    expect(download.headers.get('etag')).toBe(`"${new Bun.CryptoHasher('sha256').update(bytes).digest('hex')}"`)
    expect((await t.call('GET', '/archives/acme/blur-pack/0.9.0/node.zip')).body.error).toBe('version_flagged')
    const flagged = await t.app.request('/archives/acme/blur-pack/0.9.0/node.zip', { headers: { authorization: `Bearer ${TOKENS.alice}` } })
    expect(new Uint8Array(await flagged.arrayBuffer())).toEqual(archiveOf('0.9.0'))
    await t.deps.downloads.flush()
    expect((await t.call('GET', '/nodes/blur-pack')).body.downloads).toBe(1001)
  })

  test('an archive of 8 MB loads and downloads byte for byte (its base64 is 11 MB)', async () => {
    // Stored, not compressed: the zip is as large as its content.
    const weights = new Uint8Array(8 * 1024 * 1024).fill(7)
    const bytes = makeZip(samplePack([{ name: 'weights.bin', data: weights }]), { deflate: false })
    t.deps.settings.maxUploadBytes = 16 * 1024 * 1024
    const fixture = example()
    fixture.nodes[0].versions.find((v: any) => v.version === '1.0.0').archive_base64 = Buffer.from(bytes).toString('base64')
    await load(fixture)
    const download = await t.app.request('/archives/acme/blur-pack/1.0.0/node.zip')
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes)
  })

  test('loaded rows enter the change feed like any write, with an audit entry', async () => {
    const before = await feedPosition(t.deps.db)
    await load()
    const changes = await t.deps.db.selectFrom('changes').select(['kind', 'entity_id']).where('serial', '>', before.lastSerial).execute()
    const ids = (kind: string) =>
      changes
        .filter((c) => c.kind === kind)
        .map((c) => c.entity_id)
        .sort()
    expect(ids('publisher')).toEqual(['acme', 'shady'])
    expect(ids('node')).toEqual(['blur-pack', 'old-pack', 'upscale-tools'])
    expect(ids('version')).toHaveLength(5)
    const audit = await t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'fixture.load').execute()
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ target_id: 'test.json', actor_id: null })
    expect(audit[0]!.after_json).not.toContain('ci-')
  })

  test('ids and timestamps are the same on every load into a fresh store', async () => {
    await load()
    const other = await makeTestApp()
    try {
      const result = await loadFixture(other.deps, EXAMPLE)
      expect(result.ok).toBe(true)
      for (const path of ['/nodes/blur-pack/versions?statuses=pending&statuses=active&statuses=flagged', '/publishers/acme/tokens']) {
        expect((await other.call('GET', path, { token: TOKENS.alice })).body).toEqual(
          (await t.call('GET', path, { token: TOKENS.alice })).body,
        )
      }
    } finally {
      await other.cleanup()
    }
  })
})

describe('loading into a store that has data', () => {
  test('loading the same file again changes nothing and adds nothing to the feed', async () => {
    await load()
    const before = { feed: await feedPosition(t.deps.db), rows: await rowCounts() }
    expect(await load()).toMatchObject({ created: 0, updated: 0, unchanged: 14 })
    expect(await feedPosition(t.deps.db)).toEqual(before.feed)
    expect(await rowCounts()).toEqual(before.rows)
  })

  test('an edited file sets what it gives, adds what is new, and leaves the rest alone', async () => {
    await load()
    await publishActive(t, { pat: TOKENS.pat, node: 'blur-pack', version: '3.0.0' })
    const before = await feedPosition(t.deps.db)
    const f = example()
    f.nodes[1].description = 'Edited'
    f.nodes[0].versions[1].status = 'active'
    f.publishers[0].members[1].role = 'owner'
    f.users.push({ id: 'dave', tokens: ['ci-token-dave-000000000000005'] })
    expect(await load(f)).toMatchObject({ created: 1, updated: 3 })
    expect((await t.call('GET', '/nodes/upscale-tools')).body.description).toBe('Edited')
    expect((await t.call('GET', '/nodes/blur-pack/versions/1.1.0-rc.1')).body.status).toBe('NodeVersionStatusActive')
    expect((await t.call('GET', '/nodes/blur-pack')).body.latest_version.version).toBe('3.0.0')
    expect((await t.call('GET', '/users', { token: 'ci-token-dave-000000000000005' })).body.id).toBe('dave')
    expect((await t.call('GET', '/users', { token: TOKENS.alice })).status).toBe(200)
    const changed = await t.deps.db.selectFrom('changes').select(['kind', 'entity_id']).where('serial', '>', before.lastSerial).execute()
    expect(changed.map((c) => `${c.kind}:${c.entity_id}`).sort()).toEqual([
      'node:blur-pack',
      'node:upscale-tools',
      'publisher:acme',
      `version:${stableUuid('version:blur-pack@1.1.0-rc.1')}`,
    ])
  })

  test('members and nodes may refer to users and publishers already in the store', async () => {
    const { token } = await aliceWithPublisher(t)
    await load({
      users: [{ id: 'bob', tokens: [TOKENS.bob] }],
      publishers: [{ id: 'beta', members: [{ user: 'alice', role: 'owner' }] }],
      nodes: [
        {
          id: 'in-acme',
          publisher: 'acme',
          versions: [{ version: '1.0.0', archive_base64: Buffer.from(makeZip(samplePack())).toString('base64') }],
        },
      ],
    })
    expect((await t.call('GET', '/users/publishers', { token })).body.map((p: any) => p.id)).toEqual(['acme', 'beta'])
    expect((await t.call('GET', '/nodes/in-acme/install')).body.downloadUrl).toBe(`${PUBLIC_URL}/archives/acme/in-acme/1.0.0/node.zip`)
  })
})
