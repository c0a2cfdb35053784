/**
 * A publisher deleted or banned on one instance while another puts a node into it: two instances on one store
 * (PostgreSQL, or one SQLite file), the first of which can pause its write in its transaction, and the cases both
 * dialects run (test/backends/publisher-delete-race.test.ts, test/unit/publisher-delete-race-sqlite.test.ts).
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { sql, type InsertQueryNode, type KyselyPlugin, type QueryId, type UpdateQueryNode } from 'kysely'
import { DEFAULT_UNCLAIMED_PUBLISHER_ID as UNCLAIMED } from '../../src/domain/ids'
import { dialectOf, openStore, type Store } from '../../src/store/db'
import { createRepoHost } from '../../src/upstream/repohost'
import { addPublisher, addUser, aliceWithPublisher, makeTestApp, publish, type TestApp } from './app'
import { testSchema } from './backends'
import { eventually } from './eventually'
import { startRepoHost } from './repohost'
import { tempDirs } from './tmp'

export type Answer = { status: number; body: any }

const tableOf = (node: { kind: string }): string | undefined => {
  if (node.kind === 'InsertQueryNode') return (node as InsertQueryNode).into?.table.identifier.name
  if (node.kind !== 'UpdateQueryNode') return undefined
  return ((node as UpdateQueryNode).table as { table?: { identifier: { name: string } } }).table?.identifier.name
}

/** The first write into a table (insert or update) of the armed store pauses, in its transaction, until released. */
function pauser() {
  let armed: { table: string; reached(): void; released: Promise<void> } | undefined
  let paused: QueryId | undefined
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (armed && !paused && tableOf(args.node) === armed.table) paused = args.queryId
      return args.node
    },
    async transformResult(args) {
      if (armed && paused === args.queryId) {
        const { reached, released } = armed
        armed = undefined
        reached()
        await released
      }
      return args.result
    },
  }
  return {
    plugin,
    /** Pauses the next write into `table`: `at` once it is written, and it goes on at `release()`. */
    arm(table: string) {
      const { promise: at, resolve: reached } = Promise.withResolvers<void>()
      const { promise: released, resolve: release } = Promise.withResolvers<void>()
      paused = undefined
      armed = { table, reached, released }
      return { at, release }
    },
  }
}

export type Cleanups = (() => Promise<void> | void)[]

/** Two instances on one fresh store; the first's writes can be paused. alice owns "acme", root the unclaimed node. */
export async function twoInstances(dialect: 'postgres' | 'sqlite', cleanups: Cleanups) {
  let location: string
  if (dialect === 'postgres') {
    const schema = await testSchema()
    cleanups.push(schema.drop)
    location = schema.url
  } else {
    const dirs = tempDirs('publisher-race')
    cleanups.push(() => dirs.cleanup())
    location = join(dirs.make(), 'registry.db')
  }
  const host = startRepoHost()
  cleanups.push(() => host.stop())
  const pause = pauser()
  const base = await openStore(location)
  const other = await openStore(location)
  const repoHost = createRepoHost({ apiUrl: host.url, timeoutMs: 5000 })
  const local = dialect === 'sqlite'
  const a = await makeTestApp({ store: base.withPlugin(pause.plugin), local, deps: { repoHost } })
  const b = await makeTestApp({ store: other, local, deps: { repoHost } })
  cleanups.push(
    () => base.destroy(),
    () => other.destroy(),
    () => a.cleanup(),
    () => b.cleanup(),
  )
  const alice = await aliceWithPublisher(a)
  const root = await addUser(a, 'root', { admin: true })
  await addPublisher(a, root, UNCLAIMED)
  const legacy = await a.call('POST', `/publishers/${UNCLAIMED}/nodes`, {
    token: root,
    body: { id: 'legacy', repository: `${host.web}/octo/legacy` },
  })
  expect(legacy.status).toBe(201)
  host.users.set('gh-alice', 'alice-gh')
  host.repos.set('octo/legacy', { admins: ['alice-gh'] })
  return { a, b, other, alice, root, pause }
}

export type Setup = Awaited<ReturnType<typeof twoInstances>>

/**
 * Whether the second write waits for the first: on PostgreSQL, some statement waits on a lock; a SQLite file has one
 * writer, and the second's transaction waits for the first's (up to LOCK_WAIT_MS): given a quarter of a second.
 */
async function secondWaits(db: Store, since: number): Promise<boolean> {
  if (dialectOf(db) !== 'postgres') return performance.now() - since > 250
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
    where wait_event_type = 'Lock' and datname = current_database()`.execute(db)
  return rows[0]!.n > 0
}

/**
 * Runs `first` on the pausing instance until it writes into `table`, then `second` on the other; lets the first go
 * on once the second has answered or waits for it. Both answers, in that order.
 */
export async function race(
  s: Setup,
  table: string,
  first: () => Promise<Answer>,
  second: () => Promise<Answer>,
): Promise<[Answer, Answer]> {
  const { at, release } = s.pause.arm(table)
  const one = first()
  await at
  let answered = false
  const since = performance.now()
  const two = second().finally(() => (answered = true))
  await eventually(async () => answered || (await secondWaits(s.other, since)), { everyMs: 10 })
  release()
  return [await one, await two]
}

/** Nodes not deleted whose publisher is, and active nodes of a banned publisher: none may be. */
async function strayNodes(db: Store): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select n.id from nodes n join publishers p on p.id = n.publisher_id
    where (p.deleted_at is not null and n.status <> 'deleted') or (p.status = 'banned' and n.status = 'active')
    order by n.id`.execute(db)
  return rows.map((r) => r.id)
}

/**
 * The writes that put a node into "acme", the node they put there, and what they answer once it is deleted (an
 * admin's transfer names its target in the body: 400) or banned. A transfer into a banned publisher is an admin's
 * to make: it has no ban cases.
 */
const writers: { name: string; node: string; gone: number; banned?: number; write(t: TestApp, s: Setup): Promise<Answer> }[] = [
  {
    name: 'a publish of a new node',
    node: 'pack',
    gone: 404,
    banned: 403,
    write: (t, s) => publish(t, { pat: s.alice.pat, node: 'pack', version: '1.0.0' }),
  },
  {
    name: 'a node created without a version',
    node: 'pack',
    gone: 404,
    banned: 403,
    write: (t, s) => t.call('POST', '/publishers/acme/nodes', { token: s.alice.token, body: { id: 'pack' } }),
  },
  {
    name: 'a claim',
    node: 'legacy',
    gone: 404,
    banned: 403,
    write: (t, s) =>
      t.call('POST', '/publishers/acme/nodes/legacy/claim-my-node', { token: s.alice.token, body: { REPOHOST_TOKEN: 'gh-alice' } }),
  },
  {
    name: "an admin's transfer",
    node: 'legacy',
    gone: 400,
    write: (t, s) => t.call('PUT', `/publishers/${UNCLAIMED}/nodes/legacy`, { token: s.root, body: { publisher: { id: 'acme' } } }),
  },
]
const deleteAcme = (t: TestApp, s: Setup) => t.call('DELETE', '/publishers/acme', { token: s.alice.token })
const banAcme = (t: TestApp, s: Setup) => t.call('POST', '/publishers/acme/ban', { token: s.root, body: {} })

/** The cases, as tests of the enclosing describe, on `dialect`; `run` false skips them. */
export function publisherRaceTests(dialect: 'postgres' | 'sqlite', cleanups: Cleanups, run = true) {
  const setup = () => twoInstances(dialect, cleanups)
  for (const { name, node, gone, banned, write } of writers) {
    test.skipIf(!run)(`${name} first, the delete second: the delete finds the node (409)`, async () => {
      const s = await setup()
      const [written, deleted] = await race(
        s,
        'nodes',
        () => write(s.a, s),
        () => deleteAcme(s.b, s),
      )
      expect([written.status < 300, deleted.status, deleted.body?.error]).toEqual([true, 409, 'publisher_not_empty'])
      expect(await strayNodes(s.other)).toEqual([])
      expect((await s.b.call('GET', '/publishers/acme')).status).toBe(200)
    })

    test.skipIf(!run)(`the delete first, ${name} second: it finds no publisher (${gone})`, async () => {
      const s = await setup()
      const [deleted, written] = await race(
        s,
        'publishers',
        () => deleteAcme(s.a, s),
        () => write(s.b, s),
      )
      expect([deleted.status, written.status]).toEqual([204, gone])
      expect(await strayNodes(s.other)).toEqual([])
      expect((await s.b.call('GET', `/nodes/${node}`)).body?.publisher?.id ?? null).not.toBe('acme')
    })

    if (banned === undefined) continue
    test.skipIf(!run)(`${name} first, the ban second: the ban bans the node too`, async () => {
      const s = await setup()
      const [written, bannedIt] = await race(
        s,
        'nodes',
        () => write(s.a, s),
        () => banAcme(s.b, s),
      )
      expect([written.status < 300, bannedIt.status]).toEqual([true, 204])
      expect(await strayNodes(s.other)).toEqual([])
    })

    test.skipIf(!run)(`the ban first, ${name} second: it is refused (${banned})`, async () => {
      const s = await setup()
      const [bannedIt, written] = await race(
        s,
        'publishers',
        () => banAcme(s.a, s),
        () => write(s.b, s),
      )
      expect([bannedIt.status, written.status]).toEqual([204, banned])
      expect(await strayNodes(s.other)).toEqual([])
    })
  }
}
