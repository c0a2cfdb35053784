/**
 * Writes a parsed fixture inside one write (`commitWrite`): creates what is missing, sets the fields the file
 * gives on what exists, leaves everything else alone, and writes nothing that already matches, so loading the
 * same file again changes nothing and adds nothing to the change feed. Entities go in order of their
 * references (users, publishers, nodes, versions), each kind read and inserted in batches.
 */
import type { Insertable } from 'kysely'
import type { Fixture, FixturePublisher, FixtureUser } from '../domain/fixture'
import { hashToken, stableUuid } from '../domain/ids'
import {
  accessTokensByHashes,
  insertRows,
  membersOfPublishers,
  membershipsOfUsers,
  publishersByIds,
  publisherTokensByHashes,
  updateById,
  usersByIds,
} from '../store/batch'
import { setMemberRole } from '../store/publishers'
import type { PublisherMemberTable, PublisherTable, UserTable } from '../store/schema'
import type { Write } from './changes'
import type { FixtureArchives } from './fixture-archives'
import { applyNodes } from './fixture-nodes'
import type { FixtureProblem } from './fixture-parse'

/** Users, publishers, nodes and versions the load created, changed, or found as the file says. */
export interface FixtureCounts {
  created: number
  updated: number
  unchanged: number
}

/** What every step of the load shares. */
export interface FixtureStep {
  w: Write
  /** created_at and updated_at of what the load writes (the file's `time`, else the load time). */
  at: string
  problems: FixtureProblem[]
  counts: FixtureCounts
}

/** The entries of `wanted` that are set and differ from `existing`. */
export function differences(existing: object, wanted: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(wanted)) {
    if (value !== undefined && (existing as Record<string, unknown>)[key] !== value) out[key] = value
  }
  return out
}

export const given = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, val]) => val !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> }

export const instant = (ts: string | undefined) => (ts === undefined ? undefined : new Date(ts).toISOString())

/** Inserts (through `write.insert`) when nothing exists, else updates what differs from `wanted`; counts either way. Returns whether it wrote. */
export async function upsert(
  step: FixtureStep,
  existing: object | undefined,
  wanted: Record<string, unknown>,
  write: { insert(): void; update(changes: Record<string, unknown>): Promise<void> },
): Promise<boolean> {
  if (!existing) {
    write.insert()
    step.counts.created++
    return true
  }
  const changes = differences(existing, wanted)
  if (!Object.keys(changes).length) {
    step.counts.unchanged++
    return false
  }
  await write.update({ ...changes, updated_at: step.at })
  step.counts.updated++
  return true
}

/**
 * The tokens the store does not hold yet. One it holds for another user or publisher is a problem: the script
 * that uses it would act as someone else.
 */
function unheld<T extends { owner: string; hash: string; path: string }>(
  step: FixtureStep,
  tokens: readonly T[],
  holders: ReadonlyMap<string, string>,
  kind: 'user' | 'publisher',
): T[] {
  return tokens.filter((t) => {
    const holder = holders.get(t.hash)
    if (holder !== undefined && holder !== t.owner)
      step.problems.push({ path: t.path, message: `this token already belongs to ${kind} "${holder}"` })
    return holder === undefined
  })
}

async function applyUsers(step: FixtureStep, users: readonly FixtureUser[]): Promise<void> {
  const { w, at } = step
  const ids = users.map((u) => u.id)
  const existing = new Map((await usersByIds(w.db, ids)).map((u) => [u.id, u]))
  const inserts: Insertable<UserTable>[] = []
  const changed: string[] = []
  for (const u of users) {
    const wanted = given({ email: u.email, name: u.name, is_admin: u.admin === undefined ? undefined : u.admin ? 1 : 0, status: u.status })
    const wrote = await upsert(step, existing.get(u.id), wanted, {
      insert: () =>
        inserts.push({
          id: u.id,
          email: `${u.id}@example.com`,
          name: u.id,
          is_admin: 0,
          is_approved: 1,
          status: 'active',
          ...wanted,
          created_at: at,
          updated_at: at,
        }),
      update: (changes) => updateById(w.db, 'users', u.id, changes),
    })
    if (wrote && existing.has(u.id)) changed.push(u.id)
  }
  await insertRows(w.db, 'users', inserts)
  // A member's name and email show inside their publishers.
  for (const m of await membershipsOfUsers(w.db, changed)) w.publisher(m.publisher_id)

  const tokens = users.flatMap((u, i) =>
    (u.tokens ?? []).map((t, j) => ({ owner: u.id, hash: hashToken(t), prefix: t.slice(0, 4), path: `users[${i}].tokens[${j}]` })),
  )
  const hashes = tokens.map((t) => t.hash)
  const holders = new Map((await accessTokensByHashes(w.db, hashes)).map((r) => [r.token_hash, r.user_id]))
  const fresh = unheld(step, tokens, holders, 'user')
  await insertRows(
    w.db,
    'access_tokens',
    fresh.map((t) => ({
      id: stableUuid(`access-token:${t.hash}`),
      token_hash: t.hash,
      token_prefix: t.prefix,
      user_id: t.owner,
      created_at: at,
    })),
  )
}

async function applyPublishers(
  step: FixtureStep,
  publishers: readonly FixturePublisher[],
  fixtureUsers: ReadonlySet<string>,
): Promise<void> {
  const { w, at } = step
  const ids = publishers.map((p) => p.id)
  const existing = new Map((await publishersByIds(w.db, ids)).map((p) => [p.id, p]))
  const inserts: Insertable<PublisherTable>[] = []
  for (const p of publishers) {
    const { name, description, website, support, source_code_repo, logo, status } = p
    const wanted = given({ name, description, website, support, source_code_repo, logo, status, created_at: instant(p.created_at) })
    const created = wanted.created_at ?? at
    const base = {
      id: p.id,
      name: p.id,
      description: '',
      website: '',
      support: '',
      source_code_repo: '',
      logo: '',
      status: 'active' as const,
    }
    const wrote = await upsert(step, existing.get(p.id), wanted, {
      insert: () => inserts.push({ ...base, ...wanted, created_at: created, updated_at: created }),
      update: (changes) => updateById(w.db, 'publishers', p.id, changes),
    })
    if (wrote) w.publisher(p.id)
  }
  await insertRows(w.db, 'publishers', inserts)

  // Members: each user must be in the file or already in the store.
  const named = [...new Set(publishers.flatMap((p) => (p.members ?? []).map((m) => m.user)).filter((u) => !fixtureUsers.has(u)))]
  const known = new Set([...fixtureUsers, ...(await usersByIds(w.db, named)).map((u) => u.id)])
  const roles = new Map((await membersOfPublishers(w.db, [...existing.keys()])).map((m) => [`${m.publisher_id}\0${m.user_id}`, m.role]))
  const newMembers: Insertable<PublisherMemberTable>[] = []
  for (const [i, p] of publishers.entries()) {
    for (const [j, m] of (p.members ?? []).entries()) {
      if (!known.has(m.user)) {
        step.problems.push({ path: `publishers[${i}].members[${j}].user`, message: `no user "${m.user}" in the fixture or the store` })
        continue
      }
      const role = roles.get(`${p.id}\0${m.user}`)
      if (role === m.role) continue
      if (role) await setMemberRole(w.db, p.id, m.user, m.role)
      else
        newMembers.push({ id: stableUuid(`member:${p.id}:${m.user}`), publisher_id: p.id, user_id: m.user, role: m.role, created_at: at })
      w.publisher(p.id)
    }
  }
  await insertRows(w.db, 'publisher_members', newMembers)

  const tokens = publishers.flatMap((p, i) =>
    (p.tokens ?? []).map((t, j) => ({ owner: p.id, t, hash: hashToken(t.token), path: `publishers[${i}].tokens[${j}].token` })),
  )
  const hashes = tokens.map((t) => t.hash)
  const holders = new Map((await publisherTokensByHashes(w.db, hashes)).map((r) => [r.token_hash, r.publisher_id]))
  const fresh = unheld(step, tokens, holders, 'publisher')
  await insertRows(
    w.db,
    'publisher_tokens',
    fresh.map(({ owner, t, hash }) => ({
      id: stableUuid(`publisher-token:${hash}`),
      publisher_id: owner,
      name: t.name ?? 'fixture',
      description: t.description ?? '',
      token_hash: hash,
      token_prefix: t.token.slice(0, 4),
      created_at: at,
    })),
  )
}

export async function applyFixture(
  w: Write,
  fixture: Fixture,
  archives: FixtureArchives,
  problems: FixtureProblem[],
): Promise<FixtureCounts> {
  const step: FixtureStep = { w, at: instant(fixture.time) ?? w.now, problems, counts: { created: 0, updated: 0, unchanged: 0 } }
  const users = fixture.users ?? []
  const publishers = fixture.publishers ?? []
  await applyUsers(step, users)
  await applyPublishers(step, publishers, new Set(users.map((u) => u.id)))
  await applyNodes(step, fixture.nodes ?? [], archives, new Set(publishers.map((p) => p.id)))
  return step.counts
}
