/**
 * Permission checks the matrix does not reach, each found by breaking it (a hand-made mutant survived the suite):
 * banned and deleted targets, a banned admin, credentials in the wrong place, what a read-only registry must not
 * write, and a ban that lands while a claim asks the repository host. The callers are the matrix's world.
 */
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { disposeWorlds, makeWorld, type World } from '../support/permission-world'

let world: World | undefined
afterEach(async () => {
  await world?.t.cleanup()
  world = undefined
})
afterAll(disposeWorlds)

async function withWorld(): Promise<World> {
  world = await makeWorld()
  return world
}

/** A call as a caller of the world, answered as the matrix writes a cell: status and error code. */
async function cell(w: World, caller: keyof World['token'], method: string, path: string, body?: unknown): Promise<string> {
  const res = await w.t.call(method, path, { token: w.token[caller], body })
  return res.status >= 300 ? `${res.status} ${res.body?.error}` : String(res.status)
}

const banPack = async (w: World) => expect(await cell(w, 'admin', 'POST', '/publishers/acme/nodes/pack/ban')).toBe('204')
const deletePack = async (w: World) => expect(await cell(w, 'owner', 'DELETE', '/publishers/acme/nodes/pack')).toBe('204')
const canEdit = async (w: World, caller: keyof World['token'], path: string) =>
  (await w.t.call('GET', path, { token: w.token[caller] })).body.canEdit

describe('a banned publisher refuses those without a role as such, not as banned', () => {
  test('a user without a role in it gets permission_denied: the ban is no business of theirs', async () => {
    const w = await withWorld()
    expect(await cell(w, 'user', 'PUT', '/publishers/banned-pub', { description: 'x' })).toBe('403 permission_denied')
    expect(await cell(w, 'otherOwner', 'POST', '/publishers/banned-pub/tokens', { name: 'x' })).toBe('403 permission_denied')
  })
})

describe('a banned node through its publisher path', () => {
  test("an admin editing or deleting one of its versions gets Node Banned (only the node's own edit is moderation)", async () => {
    const w = await withWorld()
    await banPack(w)
    const version = `/publishers/acme/nodes/pack/versions/${w.versionIdOf('admin')}`
    expect(await cell(w, 'admin', 'PUT', version, { changelog: 'x' })).toBe('403 node_banned')
    expect(await cell(w, 'admin', 'DELETE', version)).toBe('403 node_banned')
  })

  test('an admin may delete the node itself (moderating it); its owner may not', async () => {
    const w = await withWorld()
    await banPack(w)
    expect(await cell(w, 'owner', 'DELETE', '/publishers/acme/nodes/pack')).toBe('403 node_banned')
    expect(await cell(w, 'admin', 'DELETE', '/publishers/acme/nodes/pack')).toBe('204')
    expect((await w.t.call('GET', '/nodes/pack')).status).toBe(404)
  })

  test('canEdit: false for its members, true for admins', async () => {
    const w = await withWorld()
    await banPack(w)
    const path = '/publishers/acme/nodes/pack/permissions'
    expect([await canEdit(w, 'owner', path), await canEdit(w, 'member', path), await canEdit(w, 'admin', path)]).toEqual([
      false,
      false,
      true,
    ])
  })
})

describe('node permissions name the node of this publisher, alive', () => {
  test("through another publisher's path: false, even for an owner of that publisher", async () => {
    const w = await withWorld()
    expect(await canEdit(w, 'otherOwner', '/publishers/other/nodes/pack/permissions')).toBe(false)
    expect(await canEdit(w, 'admin', '/publishers/other/nodes/pack/permissions')).toBe(false)
  })

  test('a deleted node: false', async () => {
    const w = await withWorld()
    await deletePack(w)
    expect(await canEdit(w, 'owner', '/publishers/acme/nodes/pack/permissions')).toBe(false)
    expect(await canEdit(w, 'admin', '/publishers/acme/nodes/pack/permissions')).toBe(false)
  })
})

describe('moderation of what was deleted', () => {
  test('banning a deleted node, or setting a status of its version, is 404', async () => {
    const w = await withWorld()
    await deletePack(w)
    expect(await cell(w, 'admin', 'POST', '/publishers/acme/nodes/pack/ban')).toBe('404 not_found')
    const status = { status: 'NodeVersionStatusActive', status_reason: 'restored' }
    expect(await cell(w, 'admin', 'PUT', '/admin/nodes/pack/versions/1.0.0', status)).toBe('404 not_found')
  })
})

describe('a banned account keeps none of its rights', () => {
  test("its own publishers' list is refused (403 user_banned)", async () => {
    const w = await withWorld()
    expect(await cell(w, 'bannedUser', 'GET', '/users/publishers')).toBe('403 user_banned')
    expect(await cell(w, 'owner', 'GET', '/users/publishers')).toBe('200')
  })

  test("a banned admin is not an admin: a banned node's versions are refused to it", async () => {
    const w = await withWorld()
    await banPack(w)
    expect(await cell(w, 'admin', 'GET', '/versions?nodeId=pack')).toBe('200')
    await w.t.deps.db.updateTable('users').set({ status: 'banned' }).where('id', '=', 'ada').execute()
    expect(await cell(w, 'admin', 'GET', '/versions?nodeId=pack')).toBe('403 node_banned')
  })
})

describe('credentials in the wrong place identify nobody', () => {
  test('a token without the Bearer scheme is 401 saying so', async () => {
    const w = await withWorld()
    const res = await w.t.call('POST', '/publishers', { headers: { authorization: w.token.owner! }, body: { id: 'x', name: 'X' } })
    expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized', message: 'token is not in Bearer format' } })
  })

  test('X-API-KEY counts on the video routes only: a registry write with it is 401', async () => {
    const w = await withWorld()
    const res = await w.t.call('POST', '/publishers', { headers: { 'x-api-key': w.token.owner! }, body: { id: 'x', name: 'X' } })
    expect(res.status).toBe(401)
  })
})

describe('reviews', () => {
  test('a banned node may be reviewed (as upstream); a deleted one is 404', async () => {
    const w = await withWorld()
    await banPack(w)
    expect(await cell(w, 'user', 'POST', '/nodes/pack/reviews?star=5')).toBe('200')
    expect(await cell(w, 'admin', 'DELETE', '/publishers/acme/nodes/pack')).toBe('204')
    expect(await cell(w, 'user', 'POST', '/nodes/pack/reviews?star=5')).toBe('404 not_found')
  })

  test('anonymous reviews: 30 per address in 10 minutes, then 429 with Retry-After', async () => {
    const w = await withWorld()
    for (let i = 0; i < 30; i++) expect(await cell(w, 'anonymous', 'POST', '/nodes/pack/reviews?star=3')).toBe('200')
    const res = await w.t.call('POST', '/nodes/pack/reviews?star=3')
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('a read-only registry writes nothing, not even bookkeeping', () => {
  test("a token's use is not recorded", async () => {
    const w = await withWorld()
    const lastUse = () =>
      w.t.deps.db.selectFrom('access_tokens').select('last_used_at').where('user_id', '=', 'olga').executeTakeFirstOrThrow()
    const before = await lastUse()
    w.t.clock.now = new Date(w.t.clock.now.getTime() + 60 * 60_000)
    w.t.deps.settings.readOnly = true
    expect(await cell(w, 'owner', 'GET', '/users')).toBe('200')
    expect(await lastUse()).toEqual(before)
    // The same call on a registry that writes records it: the check above can fail.
    w.t.deps.settings.readOnly = false
    expect(await cell(w, 'owner', 'GET', '/users')).toBe('200')
    expect(await lastUse()).not.toEqual(before)
  })

  test('installs are served but not counted', async () => {
    const w = await withWorld()
    const downloads = async () => {
      await w.t.deps.downloads.flush()
      return (await w.t.call('GET', '/nodes/pack')).body.downloads
    }
    const before = await downloads()
    w.t.deps.settings.readOnly = true
    expect(await cell(w, 'anonymous', 'GET', '/nodes/pack/install')).toBe('200')
    expect(await downloads()).toBe(before)
    w.t.deps.settings.readOnly = false
    expect(await cell(w, 'anonymous', 'GET', '/nodes/pack/install')).toBe('200')
    expect(await downloads()).toBe(before + 1)
  })
})

describe('archives of deleted versions', () => {
  test('the download of a deleted version is 404', async () => {
    const w = await withWorld()
    const archive = '/archives/acme/pack/1.0.0/node.zip'
    expect((await w.t.app.request(archive)).status).toBe(200)
    expect(await cell(w, 'owner', 'DELETE', `/publishers/acme/nodes/pack/versions/${w.versionIdOf('owner')}`)).toBe('204')
    expect((await w.t.app.request(archive)).status).toBe(404)
  })
})

describe('a claim while the node is banned', () => {
  test('a ban that lands while the repository host is asked refuses the claim (403 Node Banned); the node stays', async () => {
    const w = await withWorld()
    const host = w.host
    const repoAsked = () => host.requests.some((r) => r.path === '/repos/octo/free')
    host.requests.length = 0
    // The host holds repository replies until two have arrived: the claim's, then the test's own below.
    host.holdRepos = 2
    try {
      const claim = w.t.call('POST', '/publishers/acme/nodes/free/claim-my-node', {
        token: w.token.owner,
        body: { REPOHOST_TOKEN: 'gh-token' },
      })
      while (!repoAsked()) await Bun.sleep(1)
      expect(await cell(w, 'admin', 'POST', `/publishers/${w.t.deps.settings.unclaimedPublisherId}/nodes/free/ban`)).toBe('204')
      await fetch(`${host.url}/repos/octo/free`, { headers: { authorization: 'Bearer gh-token' } })
      const res = await claim
      expect(`${res.status} ${res.body?.error}`).toBe('403 node_banned')
    } finally {
      host.holdRepos = undefined
    }
    const node = await w.t.deps.db.selectFrom('nodes').select(['publisher_id', 'status']).where('id', '=', 'free').executeTakeFirstOrThrow()
    expect(node).toEqual({ publisher_id: w.t.deps.settings.unclaimedPublisherId, status: 'banned' })
  })
})

describe('tokens are kept as hashes, with their first 4 characters in clear', () => {
  test('access tokens and publisher tokens alike', async () => {
    const w = await withWorld()
    const created = await w.t.call('POST', '/publishers/acme/tokens', { token: w.token.owner, body: { name: 'kept' } })
    const pat: string = created.body.token
    const publisherRow = await w.t.deps.db
      .selectFrom('publisher_tokens')
      .select(['token_prefix', 'token_hash'])
      .where('name', '=', 'kept')
      .executeTakeFirstOrThrow()
    expect(publisherRow.token_prefix).toBe(pat.slice(0, 4))
    expect(publisherRow.token_hash).not.toContain(pat)
    const owner = w.token.owner!
    const accessRows = await w.t.deps.db.selectFrom('access_tokens').select('token_prefix').where('user_id', '=', 'olga').execute()
    expect(accessRows.map((r) => r.token_prefix)).toEqual([owner.slice(0, 4)])
  })
})

describe('what an admin reads', () => {
  test("members' emails, as a member does; a user without a role does not", async () => {
    const w = await withWorld()
    const emails = async (caller: keyof World['token']) =>
      (await w.t.call('GET', '/publishers/acme', { token: w.token[caller] })).body.members.map((m: any) => m.user.email ?? null)
    expect(await emails('admin')).toContain('olga@example.com')
    expect(await emails('member')).toContain('olga@example.com')
    expect((await emails('user')).every((e: string | null) => e === null)).toBe(true)
  })

  test("a version status an admin sets moves the node's latest_version", async () => {
    const w = await withWorld()
    expect((await w.t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.0.0')
    const ban = { status: 'NodeVersionStatusBanned', status_reason: 'malware' }
    expect(await cell(w, 'admin', 'PUT', '/admin/nodes/pack/versions/1.0.0', ban)).toBe('200')
    // The flagged 1.1.0 is shown once no active version is left (CONTRACT 4.1).
    expect((await w.t.call('GET', '/nodes/pack')).body.latest_version.version).toBe('1.1.0')
  })
})
