/** Bad fixtures: each kind of problem is one line naming where in the file and what is wrong, and nothing is written. */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadFixture } from '../../src/services/fixture'
import { feedPosition } from '../../src/store/changes'
import { makeZip, samplePack } from '../support/archives'
import { aliceWithPublisher, makeTestApp, publishActive, storedBlobs, type TestApp } from '../support/app'

const EXAMPLE = readFileSync(new URL('../fixtures/example-fixture.json', import.meta.url), 'utf8')
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const TOKEN = 'fixture-token-0000000000000001'

let t: TestApp

/** The example with one change applied. */
function edited(change: (f: any) => void): string {
  const f = JSON.parse(EXAMPLE)
  change(f)
  return JSON.stringify(f)
}

async function problems(text: string): Promise<string[]> {
  const result = await loadFixture(t.deps, text)
  if (result.ok) throw new Error('the fixture loaded')
  return result.problems
}

const CASES: [string, string, string[]][] = [
  ['not JSON', '{"users": [', ['line 1, column 12: not valid JSON: Unexpected EOF']],
  ['not JSON, on a later line', '{\n  "users": [],\n}', ['line 3, column 1: not valid JSON: Property name must be a string literal']],
  ['not an object', '[]', ['must be a JSON object']],
  [
    'translations nested 100,000 levels deep, a NUL at the bottom',
    edited((f) => (f.nodes[0].translations = { de: 'DEEP' })).replace('"DEEP"', `${'['.repeat(100_000)}"\\u0000"${']'.repeat(100_000)}`),
    [`nodes.0.translations.de.${'0.'.repeat(100_000)}: text may not hold a NUL character (\\u0000)`.replace('.: ', ': ')],
  ],
  [
    'an unknown field, at any depth',
    edited((f) => ((f.nodes[0].versions[0].archive = 'x'), (f.extra = 1))),
    ['nodes[0].versions[0].archive: unknown field', 'extra: unknown field'],
  ],
  ['a missing required field', edited((f) => delete f.nodes[1].publisher), ['nodes[1].publisher: is required']],
  ['a value of the wrong type', edited((f) => (f.nodes[0].downloads = '5')), ['nodes[0].downloads: must be a number']],
  ['a negative counter', edited((f) => (f.nodes[0].downloads = -1)), ['nodes[0].downloads: must be 0 or more']],
  [
    'a counter past what every backend stores',
    edited((f) => (f.nodes[0].downloads = 3_000_000_000)),
    ['nodes[0].downloads: must be at most 2147483647'],
  ],
  ['a bad user id', edited((f) => (f.users[0].id = 'al ice')), ['users[0].id: must be 1-128 letters, digits, ".", "_", "@" or "-"']],
  [
    'a bad publisher id',
    edited((f) => (f.publishers[0].id = 'Acme')),
    ['publishers[0].id: must be lowercase letters, digits and hyphens, starting with a letter or digit'],
  ],
  [
    'a bad node id',
    edited((f) => (f.nodes[0].id = '-blur')),
    ['nodes[0].id: must be ASCII letters, digits, "_", "-" or ".", starting and ending with a letter or digit'],
  ],
  [
    'a version that is not semantic',
    edited((f) => (f.nodes[0].versions[0].version = 'latest')),
    ['nodes[0].versions[0].version: must be a semantic version'],
  ],
  [
    'an unknown status',
    edited((f) => (f.nodes[0].versions[0].status = 'live')),
    ['nodes[0].versions[0].status: must be one of active, pending, flagged, banned, deleted'],
  ],
  [
    'a short token',
    edited((f) => (f.users[0].tokens = ['abc'])),
    ['users[0].tokens[0]: must be 16 to 256 printable ASCII characters without spaces'],
  ],
  [
    'an archive that is not base64',
    edited((f) => (f.nodes[0].versions[0].archive_base64 = 'not base64!')),
    ['nodes[0].versions[0].archive_base64: must be base64'],
  ],
  ['a bad time', edited((f) => (f.time = 'yesterday')), ['time: must be an RFC 3339 date-time such as 2026-01-01T00:00:00Z']],
  ['the same user twice', edited((f) => f.users.push({ id: 'alice' })), ['users[4].id: the same user id "alice" as users[0].id']],
  [
    'the same token twice',
    edited((f) => f.users[1].tokens.push(f.users[0].tokens[0])),
    ['users[1].tokens[1]: the same token as users[0].tokens[0]'],
  ],
  [
    'the same publisher token twice',
    edited((f) => (f.publishers[1].tokens = [{ token: f.publishers[0].tokens[0].token }])),
    ['publishers[1].tokens[0].token: the same token as publishers[0].tokens[0].token'],
  ],
  [
    'the same member twice',
    edited((f) => f.publishers[0].members.push({ user: 'alice', role: 'member' })),
    ['publishers[0].members[2].user: the same member "alice" as publishers[0].members[0].user'],
  ],
  [
    'the same node id ignoring case',
    edited((f) => f.nodes.push({ id: 'Blur-Pack', publisher: 'acme' })),
    ['nodes[3].id: the same node id (ignoring case) "Blur-Pack" as nodes[0].id'],
  ],
  [
    'the same version in two spellings',
    edited((f) => f.nodes[1].versions.push({ version: 'v2' })),
    ['nodes[1].versions[1].version: the same version "v2" as nodes[1].versions[0].version'],
  ],
  [
    'an archive beside host_nodes',
    edited((f) => (f.nodes[0].versions[0].host_nodes = ['X'])),
    ['nodes[0].versions[0].host_nodes: give host_nodes or archive_base64, not both (an archive has its own)'],
  ],
  [
    'a member who is nobody',
    edited((f) => (f.publishers[0].members[0].user = 'ghost')),
    ['publishers[0].members[0].user: no user "ghost" in the fixture or the store'],
  ],
  [
    'a node of no publisher',
    edited((f) => (f.nodes[2].publisher = 'nobody')),
    ['nodes[2].publisher: no publisher "nobody" in the fixture or the store'],
  ],
  [
    'an invalid archive not declared flagged',
    edited((f) => delete f.nodes[0].versions[2].status),
    [
      'nodes[0].versions[2].archive_base64: invalid archive: archive entry "../evil.py" has an unsafe path (declare "status": "flagged" to load it anyway)',
    ],
  ],
  [
    'bytes that are no archive',
    edited((f) => (f.nodes[1].versions = [{ version: '1.0.0', archive_base64: base64(new TextEncoder().encode('hello')) }])),
    ['nodes[1].versions[0].archive_base64: invalid archive: not a zip or tar.gz archive (declare "status": "flagged" to load it anyway)'],
  ],
  [
    'problems in several places, each on its own line',
    edited((f) => ((f.nodes[0].publisher = 'nobody'), (f.publishers[0].members[1].user = 'ghost'))),
    [
      'publishers[0].members[1].user: no user "ghost" in the fixture or the store',
      'nodes[0].publisher: no publisher "nobody" in the fixture or the store',
    ],
  ],
]

describe('a bad fixture is refused with one line per problem, and nothing is written', () => {
  // Every case must leave the store as it found it, so they can share one (and each checks that it did).
  beforeAll(async () => (t = await makeTestApp()))
  afterAll(() => t.cleanup())

  for (const [name, text, expected] of CASES) {
    test(name, async () => {
      const feed = await feedPosition(t.deps.db)
      expect(await problems(text)).toEqual(expected)
      expect(await feedPosition(t.deps.db)).toEqual(feed)
      expect(await t.deps.db.selectFrom('users').selectAll().execute()).toEqual([])
      expect(readdirSync(join(t.dir, 'tmp'))).toEqual([])
      expect(await storedBlobs(t)).toEqual([])
    })
  }

  test('an archive over the upload limit', async () => {
    const small = await makeTestApp({ settings: { maxUploadBytes: 100 } })
    try {
      const result = await loadFixture(
        small.deps,
        edited(() => {}),
      )
      expect(result).toEqual({
        ok: false,
        problems: [
          'nodes[0].versions[0].archive_base64: archive is larger than the limit of 100 bytes',
          'nodes[0].versions[2].archive_base64: archive is larger than the limit of 100 bytes',
        ],
      })
    } finally {
      await small.cleanup()
    }
  })
})

describe('a fixture that contradicts the store is refused', () => {
  beforeEach(async () => (t = await makeTestApp()))
  afterEach(() => t.cleanup())

  test('a token that belongs to another user or publisher', async () => {
    await loadFixture(
      t.deps,
      JSON.stringify({ users: [{ id: 'first', tokens: [TOKEN] }], publishers: [{ id: 'one', tokens: [{ token: TOKEN }] }] }),
    )
    expect(
      await problems(
        JSON.stringify({ users: [{ id: 'second', tokens: [TOKEN] }], publishers: [{ id: 'two', tokens: [{ token: TOKEN }] }] }),
      ),
    ).toEqual([
      'users[0].tokens[0]: this token already belongs to user "first"',
      'publishers[0].tokens[0].token: this token already belongs to publisher "one"',
    ])
  })

  test('a node id that differs only in case from a stored node', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'Pack', version: '1.0.0' })
    expect(await problems(JSON.stringify({ nodes: [{ id: 'pack', publisher: 'acme' }] }))).toEqual([
      'nodes[0].id: clashes with the existing node "Pack" (node ids are unique ignoring case)',
    ])
  })

  test('an archive other than the one stored for the version (archives never change)', async () => {
    const { pat } = await aliceWithPublisher(t)
    const stored = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const sha = (await t.deps.db.selectFrom('archives').select('sha256').where('version_id', '=', stored.id).executeTakeFirstOrThrow())
      .sha256
    const other = base64(makeZip(samplePack([{ name: 'more.txt', data: 'more' }])))
    const fixture = (archive: string) =>
      JSON.stringify({ nodes: [{ id: 'pack', publisher: 'acme', versions: [{ version: '1.0.0', archive_base64: archive }] }] })
    expect(await problems(fixture(other))).toEqual([
      `nodes[0].versions[0].archive_base64: differs from the archive already stored for this version (sha256 ${sha})`,
    ])
    const same = await t.app.request('/archives/acme/pack/1.0.0/node.zip')
    expect((await loadFixture(t.deps, fixture(base64(new Uint8Array(await same.arrayBuffer()))))).ok).toBe(true)
  })

  test('a version id that another version holds, or that differs from the stored version id', async () => {
    const { pat } = await aliceWithPublisher(t)
    const stored = await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const id = '00000000-0000-4000-8000-000000000001'
    expect(
      await problems(
        JSON.stringify({
          nodes: [
            { id: 'pack', publisher: 'acme', versions: [{ version: '1.0.0', id }] },
            { id: 'other', publisher: 'acme', versions: [{ version: '1.0.0', id: stored.id }] },
          ],
        }),
      ),
    ).toEqual([
      `nodes[0].versions[0].id: version 1.0.0 already exists with id "${stored.id}"`,
      `nodes[1].versions[0].id: already the id of version 1.0.0 of node "pack"`,
    ])
  })

  test('a refused fixture leaves the store as it was, archives included', async () => {
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const before = await feedPosition(t.deps.db)
    const blobs = await storedBlobs(t)
    const text = JSON.stringify({
      users: [{ id: 'new-user' }],
      nodes: [
        {
          id: 'fresh',
          publisher: 'acme',
          versions: [{ version: '1.0.0', archive_base64: base64(makeZip(samplePack([{ name: 'x', data: 'unique' }]))) }],
        },
        { id: 'orphan', publisher: 'nobody' },
      ],
    })
    expect(await problems(text)).toEqual(['nodes[1].publisher: no publisher "nobody" in the fixture or the store'])
    expect(await feedPosition(t.deps.db)).toEqual(before)
    expect(await t.deps.db.selectFrom('users').select('id').execute()).toEqual([{ id: 'alice' }])
    expect(await storedBlobs(t)).toEqual(blobs)
    expect(readdirSync(join(t.dir, 'tmp'))).toEqual([])
  })
})
