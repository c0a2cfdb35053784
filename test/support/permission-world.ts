/**
 * One registry holding every kind of caller, for permission matrices: publisher "acme" (owner olga, member mia,
 * and bob, an owner whose account is banned), "quiet" (the same people, no nodes), "other" (owner oscar),
 * "banned-pub" (owner bea; the publisher is banned), plus uma (no role), ada (admin), an anonymous caller and one
 * with a garbage token. acme's node "pack" has an active 1.0.0 and a flagged 1.1.0; banned-pub's node "bpack"
 * has 1.0.0. The unclaimed publisher (ada's) holds "free", whose repository a token "gh-token" administers on a
 * GitHub-compatible host the world runs. Given a video provider, olga (owner) has started one video task.
 */
import { Database } from 'bun:sqlite'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID } from '../../src/domain/ids'
import { insertMember } from '../../src/store/publishers'
import { createRepoHost } from '../../src/upstream/repohost'
import { makeZip, samplePack } from './archives'
import { addPublisher, addPublisherToken, addUser, makeTestApp, publish, upload, type TestApp } from './app'
import { startRepoHost, type FakeRepoHost } from './repohost'
import { nodeStartBody } from './video-node'
import { useProvider, type FakeProvider } from './video-provider'

export const CALLERS = ['anonymous', 'garbage', 'user', 'member', 'owner', 'otherOwner', 'admin', 'bannedUser', 'memberOfBanned'] as const
export type Caller = (typeof CALLERS)[number]

export interface World {
  t: TestApp
  host: FakeRepoHost
  cleanup(): Promise<void>
  token: Record<Caller, string | undefined>
  /** The publisher each caller acts on: banned-pub for memberOfBanned, acme for everyone else. */
  publisherOf(caller: Caller): string
  /** The node each caller acts on, in that publisher. */
  nodeOf(caller: Caller): string
  versionIdOf(caller: Caller): string
  /** Id of a publisher token of that publisher. */
  tokenIdOf(caller: Caller): string
  /** A publisher with no nodes where the caller has the same role as in publisherOf (banned-pub for memberOfBanned). */
  emptyPublisherOf(caller: Caller): string
  /** The video task olga (owner) started, when the world has a video provider. */
  videoTaskId?: string
}

async function versionId(t: TestApp, node: string, version: string): Promise<string> {
  const res = await t.call('GET', `/nodes/${node}/versions/${version}`)
  if (res.status === 200) return res.body.id
  const row = await t.deps.db
    .selectFrom('node_versions')
    .select('id')
    .where('node_id', '=', node)
    .where('version', '=', version)
    .executeTakeFirstOrThrow()
  return row.id
}

/** What a world's callers need to know about it besides its store and archives. */
type WorldFacts = Omit<World, 't' | 'cleanup' | 'videoTaskId'>

/**
 * The world is made once (users, publishers, uploads, the archive checks) in a data directory; each caller of
 * makeWorld gets an in-memory copy of its store and a copy of its archives, so a cell changes only its own
 * world and costs a copy.
 */
let template: Promise<{ dir: string; store: Uint8Array; facts: WorldFacts }> | undefined

export async function makeWorld(opts: { videoProvider?: FakeProvider } = {}): Promise<World> {
  template ??= makeTemplate()
  const { dir: source, store, facts } = await template
  const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-world-'))
  cpSync(join(source, 'blobs'), join(dir, 'blobs'), { recursive: true })
  // Permissions do not depend on the search engine: the store answers lists, and no index warms for each cell.
  const t = await makeTestApp({
    engine: 'store',
    dir,
    sqlite: Database.deserialize(store, { strict: true }),
    deps: { repoHost: createRepoHost({ apiUrl: facts.host.url, timeoutMs: 5000 }) },
  }).catch((err) => {
    rmSync(dir, { recursive: true, force: true })
    throw err
  })
  let videoTaskId: string | undefined
  if (opts.videoProvider) {
    useProvider(t, opts.videoProvider)
    const task = await t.call('POST', '/proxy/provider/start-end2video', {
      token: facts.token.owner,
      body: nodeStartBody(['https://x.example/a.png', 'https://x.example/b.png']),
    })
    if (task.status !== 200) throw new Error(`video task: ${task.status}`)
    videoTaskId = task.body.task_id
  }
  return { ...facts, t, cleanup: t.cleanup, videoTaskId }
}

/** Removes the template and stops its repository host (call once, after the last world). */
export async function disposeWorlds(): Promise<void> {
  const made = await template
  template = undefined
  if (!made) return
  await made.facts.host.stop()
  rmSync(made.dir, { recursive: true, force: true })
}

async function makeTemplate(): Promise<{ dir: string; store: Uint8Array; facts: WorldFacts }> {
  const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-world-template-'))
  const host = startRepoHost()
  const t = await makeTestApp({ engine: 'store', dir, local: true })
  const [olga, mia, bob, oscar, bea, uma, ada] = await Promise.all(
    ['olga', 'mia', 'bob', 'oscar', 'bea', 'uma'].map((id) => addUser(t, id)).concat(addUser(t, 'ada', { admin: true })),
  )
  await addPublisher(t, olga!, 'acme')
  await addPublisher(t, oscar!, 'other')
  await addPublisher(t, bea!, 'banned-pub')
  await addPublisher(t, olga!, 'quiet')
  await addPublisher(t, ada!, DEFAULT_UNCLAIMED_PUBLISHER_ID)
  const now = t.clock.now.toISOString()
  for (const publisher_id of ['acme', 'quiet']) {
    await insertMember(t.deps.db, { publisher_id, user_id: 'mia', role: 'member', created_at: now })
    await insertMember(t.deps.db, { publisher_id, user_id: 'bob', role: 'owner', created_at: now })
  }
  const free = await t.call('POST', `/publishers/${DEFAULT_UNCLAIMED_PUBLISHER_ID}/nodes`, {
    token: ada,
    body: { id: 'free', repository: `${host.web}/octo/free` },
  })
  if (free.status !== 201) throw new Error(`free: ${free.status}`)
  host.users.set('gh-token', 'octo-admin')
  host.repos.set('octo/free', { admins: ['octo-admin'] })
  const pat = await addPublisherToken(t, olga!, 'acme')
  await addPublisherToken(t, bea!, 'banned-pub')
  const active = await publish(t, { pat, node: 'pack', version: '1.0.0' })
  await upload(t, active.body.signedUrl, makeZip(samplePack()))
  const flagged = await publish(t, { pat, node: 'pack', version: '1.1.0' })
  await upload(t, flagged.body.signedUrl, makeZip([{ name: '../evil', data: 'x' }]))
  const bpack = await t.call('POST', '/publishers/banned-pub/nodes/bpack/versions', {
    token: bea,
    body: { node_version: { version: '1.0.0' } },
  })
  if (bpack.status !== 201) throw new Error(`bpack: ${bpack.status}`)
  await t.deps.db.updateTable('users').set({ status: 'banned' }).where('id', '=', 'bob').execute()
  await t.deps.db.updateTable('publishers').set({ status: 'banned' }).where('id', '=', 'banned-pub').execute()
  const ids = {
    acme: {
      version: await versionId(t, 'pack', '1.0.0'),
      token: (await t.deps.db.selectFrom('publisher_tokens').select('id').where('publisher_id', '=', 'acme').executeTakeFirstOrThrow()).id,
    },
    banned: {
      version: await versionId(t, 'bpack', '1.0.0'),
      token: (
        await t.deps.db.selectFrom('publisher_tokens').select('id').where('publisher_id', '=', 'banned-pub').executeTakeFirstOrThrow()
      ).id,
    },
  }
  const onBanned = (c: Caller) => c === 'memberOfBanned'
  // A consistent copy of the whole store, as one file's bytes.
  const copy = join(dir, 'world.db')
  await sql`vacuum into ${copy}`.execute(t.deps.db)
  await t.deps.db.destroy()
  const store = readFileSync(copy)
  const facts: WorldFacts = {
    host,
    token: {
      anonymous: undefined,
      garbage: 'garbage-token',
      user: uma,
      member: mia,
      owner: olga,
      otherOwner: oscar,
      admin: ada,
      bannedUser: bob,
      memberOfBanned: bea,
    },
    publisherOf: (c) => (onBanned(c) ? 'banned-pub' : 'acme'),
    nodeOf: (c) => (onBanned(c) ? 'bpack' : 'pack'),
    versionIdOf: (c) => (onBanned(c) ? ids.banned.version : ids.acme.version),
    tokenIdOf: (c) => (onBanned(c) ? ids.banned.token : ids.acme.token),
    emptyPublisherOf: (c) => (onBanned(c) ? 'banned-pub' : 'quiet'),
  }
  return { dir, store, facts }
}
