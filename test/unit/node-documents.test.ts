/**
 * What a stored node document holds is pinned to DOCUMENT_FORMAT: a change to the rendering (a field added,
 * renamed or removed) fails here until the format is raised, so that documents written by the previous rendering
 * are read as missing and written again instead of being served as they are.
 */
import { afterEach, expect, test } from 'bun:test'
import { DOCUMENT_FORMAT, makeDocuments } from '../../src/services/node-documents'
import { openStore, type Store } from '../../src/store/db'
import { listNodesByIds } from '../../src/store/nodes'
import { seedNodes } from '../support/seed'

let db: Store | undefined
afterEach(async () => {
  await db?.destroy()
  db = undefined
})

test('the fields of a document are those of its format', async () => {
  db = await openStore(':memory:')
  await seedNodes(db, [{ id: 'pack' }])
  const [doc] = await makeDocuments(db, await listNodesByIds(db, ['pack']))
  const held = {
    format: DOCUMENT_FORMAT,
    node: Object.keys(JSON.parse(doc!.node_json)),
    version: Object.keys(JSON.parse(doc!.version_json!)),
  }
  expect(held).toEqual({
    format: 1,
    node: [
      'id',
      'name',
      'description',
      'author',
      'license',
      'icon',
      'banner_url',
      'repository',
      'category',
      'tags',
      'tags_admin',
      'rating',
      'repohost_stars',
      'search_ranking',
      'status',
      'status_detail',
      'supported_os',
      'supported_accelerators',
      'supported_hostui_version',
      'supported_hostui_frontend_version',
      'preempted_host_node_names',
      'translations',
      'created_at',
      'github_stars',
      'supported_comfyui_version',
      'supported_comfyui_frontend_version',
      'preempted_comfy_node_names',
    ],
    version: [
      'id',
      'node_id',
      'version',
      'changelog',
      'dependencies',
      'deprecated',
      'status',
      'status_reason',
      'host_node_extract_status',
      'createdAt',
      'supported_os',
      'supported_accelerators',
      'supported_hostui_version',
      'supported_hostui_frontend_version',
      'tags',
      'tags_admin',
      'comfy_node_extract_status',
      'supported_comfyui_version',
      'supported_comfyui_frontend_version',
    ],
  })
})
