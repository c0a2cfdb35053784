/**
 * Schema 13's step on a store at version 12 (either dialect): the nodes written before it get their search texts
 * from their rows, and the SQL search finds them by keyword and by a host node of their latest version only.
 */
import { expect } from 'bun:test'
import { sql, type Kysely } from 'kysely'
import type { Store } from '../../src/store/db'
import { queryNodeIds } from '../../src/store/node-query'
import { staleSearchTexts } from './documents'

const NOW = '2026-01-01T00:00:00.000Z'

/** Rows a version-12 store may hold: a node whose latest version has host nodes (an older one has others), one without. */
export async function insertVersion12Nodes(db: Kysely<any>): Promise<void> {
  await sql`insert into publishers (id, name, created_at, updated_at) values ('acme', 'Acme', ${NOW}, ${NOW})`.execute(db)
  await sql`insert into nodes (id, normalized_id, publisher_id, name, description, author, tags_json, created_at, updated_at)
    values ('Upscaler', 'upscaler', 'acme', 'Image Upscaler', 'Makes pictures larger', 'Ann', '["image"]', ${NOW}, ${NOW}),
      ('Bare', 'bare', 'acme', 'Bare', '', '', '[]', ${NOW}, ${NOW})`.execute(db)
  await sql`insert into node_versions (id, node_id, version, status, created_at, updated_at)
    values ('u1', 'Upscaler', '1.0.0', 'active', ${NOW}, ${NOW}), ('u2', 'Upscaler', '2.0.0', 'active', ${NOW}, ${NOW})`.execute(db)
  await sql`insert into host_nodes (version_id, name) values ('u1', 'OldSampler'), ('u2', 'UpscaleModel'), ('u2', 'LoadUpscaler')`.execute(
    db,
  )
  await sql`update nodes set latest_version_id = 'u2', latest_version_status = 'active' where id = 'Upscaler'`.execute(db)
}

/** What the step must leave, checked on the migrated store. */
export async function expectSearchTextsOfVersion12Nodes(db: Store): Promise<void> {
  expect(await staleSearchTexts(db)).toEqual([])
  const texts = await db.selectFrom('node_search_keywords').selectAll().orderBy('node_id').execute()
  expect(texts).toEqual([
    { node_id: 'Bare', text: 'Bare\nBare\n\n\n[]' },
    { node_id: 'Upscaler', text: 'Upscaler\nImage Upscaler\nMakes pictures larger\nAnn\n["image"]' },
  ])
  const found = (q: object) => queryNodeIds(db, { offset: 0, limit: 10, includeBanned: false, ...q }).then((r) => r.ids)
  expect(await found({ search: 'PICTURES' })).toEqual(['Upscaler'])
  expect(await found({ search: 'bare' })).toEqual(['Bare'])
  expect(await found({ hostNode: 'loadupscal' })).toEqual(['Upscaler'])
  expect(await found({ hostNode: 'OldSampler' })).toEqual([])
}
