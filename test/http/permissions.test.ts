/**
 * Every write route (and every read that depends on who asks) against every kind of caller. Each cell is the
 * status and, for refusals, the error code: breaking any single check turns a cell red.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'

import { feedPosition } from '../../src/store/changes'
import { CALLERS, disposeWorlds, makeWorld, type Caller, type World } from '../support/permission-world'
import { nodeStartBody } from '../support/video-node'
import { startFakeProvider, type FakeProvider } from '../support/video-provider'

interface Route {
  name: string
  /** The route needs a video provider (the world then holds a video task of the owner). */
  video?: true
  request(w: World, c: Caller): { method: string; path: string; body?: unknown }
  expect: Record<Caller, string>
  /** The same request to a registry started with --read-only: refused, or answered as usual (reads). */
  readOnly: Record<Caller, string> | 'as usual'
  /** What a success cell shows besides its status (for reads whose answer depends on the caller). */
  show?(body: any): string
}

const NO_USER = { anonymous: '401 unauthorized', garbage: '401 unauthorized' }
const BANNED_USER = '403 user_banned'
const DENIED = '403 permission_denied'

/** Writes of a publisher's owners and members. */
const MEMBERS = (ok: string): Record<Caller, string> => ({
  ...NO_USER,
  user: DENIED,
  member: ok,
  owner: ok,
  otherOwner: DENIED,
  admin: ok,
  bannedUser: BANNED_USER,
  memberOfBanned: '403 publisher_banned',
})

/** Writes of a publisher's owners. */
const OWNERS = (ok: string): Record<Caller, string> => ({ ...MEMBERS(ok), member: DENIED })

/** Moderation: admins only. */
const NOT_ADMIN = '403 not_admin'
const ADMINS = (ok: string): Record<Caller, string> => ({
  ...NO_USER,
  user: NOT_ADMIN,
  member: NOT_ADMIN,
  owner: NOT_ADMIN,
  otherOwner: NOT_ADMIN,
  admin: ok,
  bannedUser: BANNED_USER,
  memberOfBanned: NOT_ADMIN,
})

const CAN_EDIT = '200 canEdit=true'
const CANNOT_EDIT = '200 canEdit=false'

/** A flagged version's archive: to the publisher's members and admins (active accounts) only. */
const FLAGGED = '403 version_flagged'
const FLAGGED_ARCHIVE: Record<Caller, string> = {
  anonymous: FLAGGED,
  garbage: FLAGGED,
  user: FLAGGED,
  member: '200',
  owner: '200',
  otherOwner: FLAGGED,
  admin: '200',
  bannedUser: FLAGGED,
  memberOfBanned: FLAGGED,
}

/** The video proxy answers `{message, details}`: its cells show the message. Any active user may use it. */
const VIDEO_CALLERS: Record<Caller, string> = {
  anonymous: '401 Authentication required: send Authorization: Bearer <token> or X-API-KEY: <token> with an access token',
  garbage: '401 invalid auth token',
  user: '200',
  member: '200',
  owner: '200',
  otherOwner: '200',
  admin: '200',
  bannedUser: '403 user/publisher is banned',
  memberOfBanned: '200',
}

/** Every caller, admins included, is refused every write by a read-only registry. */
const READ_ONLY = Object.fromEntries(CALLERS.map((c) => [c, '403 read_only'])) as Record<Caller, string>

const ROUTES: Route[] = [
  {
    name: 'POST /publishers',
    request: (_w, c) => ({ method: 'POST', path: '/publishers', body: { id: `new-${c.toLowerCase()}`, name: 'New' } }),
    expect: {
      ...NO_USER,
      user: '201',
      member: '201',
      owner: '201',
      otherOwner: '201',
      admin: '201',
      bannedUser: BANNED_USER,
      memberOfBanned: '201',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'PUT /publishers/{p}',
    request: (w, c) => ({ method: 'PUT', path: `/publishers/${w.publisherOf(c)}`, body: { description: 'changed' } }),
    expect: {
      ...NO_USER,
      user: DENIED,
      member: DENIED,
      owner: '200',
      otherOwner: DENIED,
      admin: '200',
      bannedUser: BANNED_USER,
      memberOfBanned: '403 publisher_banned',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/tokens',
    request: (w, c) => ({ method: 'POST', path: `/publishers/${w.publisherOf(c)}/tokens`, body: { name: 'ci' } }),
    expect: {
      ...NO_USER,
      user: DENIED,
      member: DENIED,
      owner: '201',
      otherOwner: DENIED,
      admin: '201',
      bannedUser: BANNED_USER,
      memberOfBanned: '403 publisher_banned',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'GET /publishers/{p}/tokens',
    request: (w, c) => ({ method: 'GET', path: `/publishers/${w.publisherOf(c)}/tokens` }),
    expect: {
      ...NO_USER,
      user: DENIED,
      member: DENIED,
      owner: '200',
      otherOwner: DENIED,
      admin: '200',
      bannedUser: BANNED_USER,
      memberOfBanned: '403 publisher_banned',
    },
    readOnly: 'as usual',
  },
  {
    name: 'DELETE /publishers/{p}/tokens/{id}',
    request: (w, c) => ({ method: 'DELETE', path: `/publishers/${w.publisherOf(c)}/tokens/${w.tokenIdOf(c)}` }),
    expect: {
      ...NO_USER,
      user: DENIED,
      member: DENIED,
      owner: '204',
      otherOwner: DENIED,
      admin: '204',
      bannedUser: BANNED_USER,
      memberOfBanned: '403 publisher_banned',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/nodes/{n}/versions (bearer)',
    request: (w, c) => ({
      method: 'POST',
      path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}/versions`,
      body: { node_version: { version: '9.0.0' } },
    }),
    expect: {
      ...NO_USER,
      user: DENIED,
      member: '201',
      owner: '201',
      otherOwner: DENIED,
      admin: '201',
      bannedUser: BANNED_USER,
      memberOfBanned: '403 node_banned',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'PUT /publishers/{p}/nodes/{n}/versions/{id}',
    request: (w, c) => ({
      method: 'PUT',
      path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}/versions/${w.versionIdOf(c)}`,
      body: { changelog: 'edited', deprecated: true },
    }),
    expect: {
      ...NO_USER,
      user: DENIED,
      member: '200',
      owner: '200',
      otherOwner: DENIED,
      admin: '200',
      bannedUser: BANNED_USER,
      memberOfBanned: '403 publisher_banned',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /nodes/{n}/reviews',
    request: () => ({ method: 'POST', path: '/nodes/pack/reviews?star=4' }),
    expect: {
      anonymous: '200',
      garbage: '401 unauthorized',
      user: '200',
      member: '200',
      owner: '200',
      otherOwner: '200',
      admin: '200',
      bannedUser: BANNED_USER,
      memberOfBanned: '200',
    },
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/nodes',
    request: (w, c) => ({ method: 'POST', path: `/publishers/${w.publisherOf(c)}/nodes`, body: { id: `made-by-${c}` } }),
    expect: MEMBERS('201'),
    readOnly: READ_ONLY,
  },
  {
    name: 'PUT /publishers/{p}/nodes/{n}',
    request: (w, c) => ({ method: 'PUT', path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}`, body: { description: 'edited' } }),
    expect: MEMBERS('200'),
    readOnly: READ_ONLY,
  },
  {
    name: 'DELETE /publishers/{p}/nodes/{n}',
    request: (w, c) => ({ method: 'DELETE', path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}` }),
    expect: MEMBERS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'DELETE /publishers/{p}/nodes/{n}/versions/{id}',
    request: (w, c) => ({ method: 'DELETE', path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}/versions/${w.versionIdOf(c)}` }),
    expect: MEMBERS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'DELETE /publishers/{p} (no nodes left)',
    request: (w, c) => ({ method: 'DELETE', path: `/publishers/${w.emptyPublisherOf(c)}` }),
    expect: OWNERS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/nodes/{n}/claim-my-node',
    request: (w, c) => ({
      method: 'POST',
      path: `/publishers/${w.publisherOf(c)}/nodes/free/claim-my-node`,
      body: { REPOHOST_TOKEN: 'gh-token' },
    }),
    expect: OWNERS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'GET /publishers/{p}/permissions',
    request: (w, c) => ({ method: 'GET', path: `/publishers/${w.publisherOf(c)}/permissions` }),
    show: (body) => `canEdit=${body.canEdit}`,
    expect: {
      ...NO_USER,
      user: CANNOT_EDIT,
      member: CANNOT_EDIT,
      owner: CAN_EDIT,
      otherOwner: CANNOT_EDIT,
      admin: CAN_EDIT,
      bannedUser: CANNOT_EDIT,
      memberOfBanned: CANNOT_EDIT,
    },
    readOnly: 'as usual',
  },
  {
    name: 'GET /publishers/{p}/nodes/{n}/permissions',
    request: (w, c) => ({ method: 'GET', path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}/permissions` }),
    show: (body) => `canEdit=${body.canEdit}`,
    expect: {
      ...NO_USER,
      user: CANNOT_EDIT,
      member: CAN_EDIT,
      owner: CAN_EDIT,
      otherOwner: CANNOT_EDIT,
      admin: CAN_EDIT,
      bannedUser: CANNOT_EDIT,
      memberOfBanned: CANNOT_EDIT,
    },
    readOnly: 'as usual',
  },
  {
    name: 'POST /publishers/{p}/nodes/{n}/ban',
    request: (w, c) => ({ method: 'POST', path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}/ban` }),
    expect: ADMINS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/nodes/{n}/unban',
    request: (w, c) => ({ method: 'POST', path: `/publishers/${w.publisherOf(c)}/nodes/${w.nodeOf(c)}/unban` }),
    expect: ADMINS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/ban',
    request: (w, c) => ({ method: 'POST', path: `/publishers/${w.publisherOf(c)}/ban` }),
    expect: ADMINS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /publishers/{p}/unban',
    request: (w, c) => ({ method: 'POST', path: `/publishers/${w.publisherOf(c)}/unban` }),
    expect: ADMINS('204'),
    readOnly: READ_ONLY,
  },
  {
    name: 'PUT /admin/nodes/{n}/versions/{v}',
    request: (w, c) => ({
      method: 'PUT',
      path: `/admin/nodes/${w.nodeOf(c)}/versions/1.0.0`,
      body: { status: 'NodeVersionStatusBanned', status_reason: 'malware' },
    }),
    expect: ADMINS('200'),
    readOnly: READ_ONLY,
  },
  {
    name: 'GET /admin/audit',
    request: () => ({ method: 'GET', path: '/admin/audit' }),
    expect: ADMINS('200'),
    readOnly: 'as usual',
  },
  {
    name: 'GET the archive of a flagged version',
    request: () => ({ method: 'GET', path: '/archives/acme/pack/1.1.0/node.zip' }),
    expect: FLAGGED_ARCHIVE,
    readOnly: 'as usual',
  },
  {
    name: 'GET /nodes/{n}/install of a flagged version',
    request: () => ({ method: 'GET', path: '/nodes/pack/install?version=1.1.0' }),
    expect: FLAGGED_ARCHIVE,
    readOnly: 'as usual',
  },
  {
    name: 'POST /proxy/provider/start-end2video',
    video: true,
    request: () => ({
      method: 'POST',
      path: '/proxy/provider/start-end2video',
      body: nodeStartBody(['https://x.example/a.png', 'https://x.example/b.png']),
    }),
    expect: VIDEO_CALLERS,
    readOnly: READ_ONLY,
  },
  {
    name: 'POST /customers/storage',
    video: true,
    request: () => ({ method: 'POST', path: '/customers/storage', body: { file_name: 'frame.png', content_type: 'image/png' } }),
    expect: VIDEO_CALLERS,
    readOnly: READ_ONLY,
  },
  {
    name: "GET /proxy/provider/tasks/{t}/creations of the owner's task",
    video: true,
    request: (w) => ({ method: 'GET', path: `/proxy/provider/tasks/${w.videoTaskId}/creations` }),
    expect: {
      ...VIDEO_CALLERS,
      user: '404 task not found',
      member: '404 task not found',
      otherOwner: '404 task not found',
      memberOfBanned: '404 task not found',
    },
    readOnly: 'as usual',
  },
]

/** A cell as the tables write it: the status, and the error code (or the proxy's message) or what `show` shows. */
function cell(route: Route, res: { status: number; body: any }): string {
  if (res.status >= 300) return `${res.status} ${res.body?.error ?? res.body?.message}`
  return route.show ? `${res.status} ${route.show(res.body)}` : String(res.status)
}

let provider: FakeProvider
beforeAll(async () => (provider = await startFakeProvider()))
afterAll(() => provider.stop())
afterAll(disposeWorlds)

let world: World | undefined
afterEach(async () => {
  await world?.t.cleanup()
  world = undefined
})

describe('permission matrix', () => {
  for (const route of ROUTES) {
    describe(route.name, () => {
      for (const caller of CALLERS) {
        test(`${caller}: ${route.expect[caller]}`, async () => {
          world = await makeWorld(route.video ? { videoProvider: provider } : {})
          const { method, path, body } = route.request(world, caller)
          const res = await world.t.call(method, path, { token: world.token[caller], body })
          expect(cell(route, res)).toBe(route.expect[caller])
        })
      }
    })
  }
})

describe('permission matrix of a read-only registry (--read-only)', () => {
  for (const route of ROUTES) {
    // Nothing a cell does changes the registry here, so the cells of one route share one world.
    describe(route.name, () => {
      let shared: World
      let serial = 0
      beforeAll(async () => {
        shared = await makeWorld(route.video ? { videoProvider: provider } : {})
        shared.t.deps.settings.readOnly = true
        serial = (await feedPosition(shared.t.deps.db)).lastSerial
      })
      afterAll(() => shared.t.cleanup())
      const expected = route.readOnly === 'as usual' ? route.expect : route.readOnly
      for (const caller of CALLERS) {
        test(`${caller}: ${expected[caller]}`, async () => {
          const { method, path, body } = route.request(shared, caller)
          const res = await shared.t.call(method, path, { token: shared.token[caller], body })
          expect(cell(route, res)).toBe(expected[caller])
        })
      }
      test('nothing changed', async () => expect((await feedPosition(shared.t.deps.db)).lastSerial).toBe(serial))
    })
  }
})

describe('a refused caller is refused before the body is read', () => {
  // The refusals that depend on no target: no user, and for moderation, not an admin. A malformed body gets the
  // same cell, so an anonymous caller learns nothing from the body's checks and cannot make the server parse one.
  // Publishing is not here: its credential may be the body's personal_access_token.
  const FIRST = new Set([NO_USER.anonymous, NOT_ADMIN])
  const cells = ROUTES.filter((r) => !r.name.includes('/versions (bearer)')).flatMap((route) =>
    CALLERS.filter((c) => FIRST.has(route.expect[c])).map((caller) => ({ route, caller })),
  )
  let shared: World
  beforeAll(async () => (shared = await makeWorld()))
  afterAll(() => shared.t.cleanup())
  test('covers the writes of users and of admins', () => {
    const names = new Set(cells.map((x) => x.route.name))
    for (const name of [
      'POST /publishers',
      'PUT /publishers/{p}/nodes/{n}',
      'POST /publishers/{p}/ban',
      'PUT /admin/nodes/{n}/versions/{v}',
    ]) {
      expect(names).toContain(name)
    }
  })
  for (const { route, caller } of cells) {
    test(`${route.name}, ${caller}, malformed JSON: ${route.expect[caller]}`, async () => {
      const { method, path } = route.request(shared, caller)
      const res = await shared.t.call(method, path, { token: shared.token[caller], body: '{"broken' })
      expect(cell(route, res)).toBe(route.expect[caller])
    })
  }
})

describe('acting on one publisher through the path of another', () => {
  test("an owner cannot edit another publisher's version through their own publisher's path (404)", async () => {
    world = await makeWorld()
    const res = await world.t.call('PUT', `/publishers/other/nodes/pack/versions/${world.versionIdOf('owner')}`, {
      token: world.token.otherOwner,
      body: { changelog: 'hijacked' },
    })
    expect(res.status).toBe(404)
    expect((await world.t.call('GET', '/nodes/pack/versions/1.0.0')).body.changelog).toBe('')
  })

  test("an owner cannot delete another publisher's token through their own publisher's path (404)", async () => {
    world = await makeWorld()
    const res = await world.t.call('DELETE', `/publishers/other/tokens/${world.tokenIdOf('owner')}`, { token: world.token.otherOwner })
    expect(res.status).toBe(404)
    expect((await world.t.call('GET', '/publishers/acme/tokens', { token: world.token.owner })).body).toHaveLength(1)
  })

  test("a publisher token publishes to its own publisher only, and not into another publisher's node", async () => {
    world = await makeWorld()
    const otherPat = (await world.t.call('POST', '/publishers/other/tokens', { token: world.token.otherOwner, body: { name: 'x' } })).body
      .token
    const body = (id: string) => ({ personal_access_token: otherPat, node: { id }, node_version: { version: '5.0.0' } })
    expect((await world.t.call('POST', '/publishers/acme/nodes/pack/versions', { body: body('pack') })).body.error).toBe(
      'invalid_personal_access_token',
    )
    expect((await world.t.call('POST', '/publishers/other/nodes/pack/versions', { body: body('pack') })).body.error).toBe(
      'permission_denied',
    )
  })
})
