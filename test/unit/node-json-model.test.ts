/**
 * Randomized: DocumentPlaces and ChangeTimes against simple Map models, and the node JSON cache with index slots that
 * come and go (removed and added again, case variants), archives, counts and publishers changing, against a cache
 * made afresh for every read.
 */
import { afterEach, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { ChangeTimes } from '../../src/services/change-times'
import { DocumentPlaces } from '../../src/services/document-places'
import { CHANGES_HELD, createNodeJsonCache } from '../../src/services/node-json'
import { writeDocuments } from '../../src/services/node-documents'
import { openStore, type Store } from '../../src/store/db'
import type { DocumentPlace } from '../../src/store/node-documents'
import { picker, seededRandom } from '../../scripts/bench/random'
import { seedNodes } from '../support/seed'

function rng(seed: number) {
  const next = seededRandom(seed)
  const int = (n: number) => Math.floor(next() * n)
  return { next, int, pick: picker(next) }
}

/** An index like catalog.ts's: ids lower-cased, a slot a node, never reused (a node removed and added again gets a new one). */
class FakeIndex {
  private readonly slots = new Map<string, number>()
  private next = 0
  constructor(first = 0) {
    this.next = first
  }
  slotOf = (id: string) => this.slots.get(id.toLowerCase())
  add(id: string) {
    if (!this.slots.has(id.toLowerCase())) this.slots.set(id.toLowerCase(), (this.next += 1 + (this.next % 7)))
  }
  remove(id: string) {
    this.slots.delete(id.toLowerCase())
  }
}

const ROWS = [0, 1, 7, 1023, 1024, 2 ** 31, 2 ** 40, 2 ** 53 - 1, undefined]
const norm = (p: DocumentPlace | undefined) => (p === undefined ? undefined : { archived: p.archived, row: p.row })

for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
  test(`DocumentPlaces with index slots matches a Map by slot (seed ${seed})`, () => {
    const r = rng(seed)
    const ids = ['a', 'A', 'b', 'B', 'c', 'node-1', 'NODE-1', 'x']
    const index = new FakeIndex(seed * 300)
    const places = new DocumentPlaces(index.slotOf)
    const model = new Map<number, DocumentPlace>()
    for (let step = 0; step < 5000; step++) {
      const id = r.pick(ids)
      const op = r.int(100)
      if (op < 15) index.add(id)
      else if (op < 20) {
        // A node leaves the index: whatever was kept at its slot is unreachable from now on.
        index.remove(id)
      } else if (op < 50) {
        const place = { archived: r.next() < 0.5, row: r.pick(ROWS) }
        places.set(id, place)
        const slot = index.slotOf(id)
        if (slot !== undefined) model.set(slot, place)
      } else if (op < 58) {
        places.delete(id)
        const slot = index.slotOf(id)
        if (slot !== undefined) model.delete(slot)
      } else if (op < 60) {
        places.clear()
        model.clear()
      } else {
        const slot = index.slotOf(id)
        expect(norm(places.get(id))).toEqual(slot === undefined ? undefined : norm(model.get(slot)))
      }
      // A node added again is never given a place kept for it before.
      if (op < 15 && index.slotOf(id) !== undefined && !model.has(index.slotOf(id)!)) expect(places.get(id)).toBeUndefined()
    }
  })

  test(`DocumentPlaces without an index matches a Map by id (seed ${seed})`, () => {
    const r = rng(seed)
    const ids = Array.from({ length: 3000 }, (_, i) => (i % 3 ? `n-${i}` : `N-${i - 1}`))
    const places = new DocumentPlaces()
    const model = new Map<string, DocumentPlace>()
    for (let step = 0; step < 20000; step++) {
      const id = r.pick(ids)
      const op = r.int(1000)
      if (op < 400) {
        const place = { archived: r.next() < 0.5, row: r.pick(ROWS) }
        places.set(id, place)
        model.set(id, place)
      } else if (op < 500) {
        places.delete(id)
        model.delete(id)
      } else if (op < 501) {
        places.clear()
        model.clear()
      } else expect(norm(places.get(id))).toEqual(norm(model.get(id)))
    }
  })

  test(`ChangeTimes: never says unchanged where an exact Map says changed; exact where its floor is not past (seed ${seed})`, () => {
    const r = rng(seed)
    const max = 1 + r.int(40)
    const times = new ChangeTimes(max)
    const exact = new Map<string, number>()
    let exactFloor = 0
    let sequence = 0
    const ids = Array.from({ length: 60 }, (_, i) => `n${i}`)
    for (let step = 0; step < 20000; step++) {
      const op = r.int(100)
      if (op < 45) {
        sequence++
        for (let k = 1 + r.int(r.next() < 0.05 ? 80 : 4); k > 0; k--) {
          const id = r.pick(ids)
          times.set(id, sequence)
          exact.set(id, sequence)
        }
      } else if (op < 47) {
        sequence++
        times.forgetAll(sequence)
        exactFloor = sequence
      } else {
        const since = r.int(sequence + 2)
        const id = r.pick(ids)
        const truly = Math.max(exactFloor, exact.get(id) ?? 0) > since
        const said = times.after(id, since)
        if (truly) expect(said).toBe(true)
        if (!times.allAfter(since)) expect(said).toBe(truly)
        expect(times.size).toBeLessThanOrEqual(max)
      }
    }
  })
}

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

const NODES = ['a-pack', 'B-Pack', 'c-pack', 'd-pack', 'E-pack']

for (const seed of [11, 12, 13, 14, 15, 16]) {
  test(`node JSON with index slots coming and going, archives and counts changing, answers as made afresh (seed ${seed})`, async () => {
    const r = rng(seed)
    db = await openStore(':memory:')
    await seedNodes(
      db,
      NODES.map((id, i) => ({ id, description: `${id} v0`, publisher: i % 2 ? 'acme' : 'zeta' })),
    )
    await writeDocuments(db, NODES)
    const base = db
    const index = new FakeIndex()
    for (const id of NODES) index.add(id)
    // No bytes for texts every other seed: every render reads the documents (from their places).
    const cache = createNodeJsonCache(db, 'http://x', undefined, seed % 2 ? 0 : undefined, {
      downloadsOf: () => undefined,
      slotOf: index.slotOf,
    })
    const fresh = async (ids: string[]) => createNodeJsonCache(base, 'http://x').render(ids)
    const version = async (id: string) =>
      (await sql<{ v: string }>`select latest_version_id as v from nodes where id = ${id}`.execute(base)).rows[0]!.v
    // The model of changes: the sequence each node last changed (content, and with counts), for changedAfter's soundness.
    const content = new Map<string, number>()
    const any = new Map<string, number>()
    let all = 0
    const marks: number[] = [0]
    let edits = 0
    for (let step = 0; step < 400; step++) {
      const id = r.pick(NODES)
      const op = r.int(100)
      if (op < 12) {
        // The latest version's archive comes or goes: told as a change of the node.
        const v = await version(id)
        const has = (await sql<{ n: number }>`select count(*) as n from archives where version_id = ${v}`.execute(base)).rows[0]!.n
        if (has) await sql`delete from archives where version_id = ${v}`.execute(base)
        else
          await sql`insert into archives (version_id, sha256, size_bytes, format, created_at) values (${v}, ${'0'.repeat(64)}, 1, 'zip', '2026-01-01T00:00:00.000Z')`.execute(
            base,
          )
        cache.nodesChanged([id])
        content.set(id, cache.sequence)
        any.set(id, cache.sequence)
      } else if (op < 22) {
        await sql`update nodes set description = ${`${id} v${++edits}`} where id = ${id}`.execute(base)
        await writeDocuments(base, [id])
        cache.nodesChanged([id])
        content.set(id, cache.sequence)
        any.set(id, cache.sequence)
      } else if (op < 32) {
        const n = r.int(1000)
        await sql`update node_downloads set downloads = ${n} where node_id = ${id}`.execute(base)
        cache.countsChanged(new Map([[id, n]]))
        any.set(id, cache.sequence)
      } else if (op < 34) {
        // A flush naming more nodes than are remembered one by one (ids not stored: nothing else to write).
        cache.countsChanged(new Map(Array.from({ length: CHANGES_HELD + 1 }, (_, i) => [`ghost-${i}`, 1])))
      } else if (op < 36) {
        await sql`update publishers set name = ${`renamed ${step}`} where id = 'acme'`.execute(base)
        cache.publishersChanged()
        all = cache.sequence
      } else if (op < 42) {
        // The index drops a node and may take it again (a new slot), in either case of its id.
        index.remove(id)
        if (r.next() < 0.7) index.add(r.next() < 0.5 ? id : id.toUpperCase())
      } else if (op < 45) {
        marks.push(cache.sequence)
      } else {
        const ids = NODES.filter(() => r.next() < 0.5)
        expect(await cache.render(ids)).toEqual(await fresh(ids))
        const since = r.pick(marks)
        for (const n of NODES) {
          if (Math.max(all, content.get(n) ?? 0) > since) expect(cache.contentChangedAfter(n, since)).toBe(true)
          if (Math.max(all, any.get(n) ?? 0) > since) expect(cache.changedAfter([n], since)).toBe(true)
        }
      }
    }
  })
}
