/**
 * One registry holding every kind of caller, for permission matrices: publisher "acme" (owner olga, member mia,
 * and bob, an owner whose account is banned), "other" (owner oscar), "banned-pub" (owner bea; the publisher is
 * banned), plus uma (no role), ada (admin), an anonymous caller and one with a garbage token. acme's node
 * "pack" has an active 1.0.0 and a flagged 1.1.0; banned-pub's node "bpack" has 1.0.0. Given a video provider,
 * olga (owner) has started one video task.
 */
import { insertMember } from '../../src/store/publishers'
import { makeZip, samplePack } from './archives'
import { addPublisher, addPublisherToken, addUser, makeTestApp, publish, upload, type TestApp } from './app'
import { nodeStartBody } from './video-node'
import { useProvider, type FakeProvider } from './video-provider'

export const CALLERS = ['anonymous', 'garbage', 'user', 'member', 'owner', 'otherOwner', 'admin', 'bannedUser', 'memberOfBanned'] as const
export type Caller = (typeof CALLERS)[number]

export interface World {
  t: TestApp
  token: Record<Caller, string | undefined>
  /** The publisher each caller acts on: banned-pub for memberOfBanned, acme for everyone else. */
  publisherOf(caller: Caller): string
  /** The node each caller acts on, in that publisher. */
  nodeOf(caller: Caller): string
  versionIdOf(caller: Caller): string
  /** Id of a publisher token of that publisher. */
  tokenIdOf(caller: Caller): string
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

export async function makeWorld(opts: { videoProvider?: FakeProvider } = {}): Promise<World> {
  const t = await makeTestApp()
  const [olga, mia, bob, oscar, bea, uma, ada] = await Promise.all(
    ['olga', 'mia', 'bob', 'oscar', 'bea', 'uma'].map((id) => addUser(t, id)).concat(addUser(t, 'ada', { admin: true })),
  )
  await addPublisher(t, olga!, 'acme')
  await addPublisher(t, oscar!, 'other')
  await addPublisher(t, bea!, 'banned-pub')
  const now = t.clock.now.toISOString()
  await insertMember(t.deps.db, { publisher_id: 'acme', user_id: 'mia', role: 'member', created_at: now })
  await insertMember(t.deps.db, { publisher_id: 'acme', user_id: 'bob', role: 'owner', created_at: now })
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
  let videoTaskId: string | undefined
  if (opts.videoProvider) {
    useProvider(t, opts.videoProvider)
    const task = await t.call('POST', '/proxy/provider/start-end2video', {
      token: olga,
      body: nodeStartBody(['https://x.example/a.png', 'https://x.example/b.png']),
    })
    if (task.status !== 200) throw new Error(`video task: ${task.status}`)
    videoTaskId = task.body.task_id
  }
  const onBanned = (c: Caller) => c === 'memberOfBanned'
  return {
    t,
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
    videoTaskId,
  }
}
