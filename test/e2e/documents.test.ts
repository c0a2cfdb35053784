/**
 * A store whose nodes have no documents yet (as one written before documents existed: here nodes seeded straight
 * into a SQLite file): the executable serves them from their rows at once and fills their documents in the
 * background; a read-only one leaves the store as it is.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../../src/store/db'
import { ensureBinary, spawnServe } from '../support/binary'
import { seedNodes } from '../support/seed'

const dirs: string[] = []
beforeAll(ensureBinary)
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const NODES = 1200

async function storeWithoutDocuments(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-documents-'))
  dirs.push(dir)
  const db = await openStore(join(dir, 'registry.db'))
  await seedNodes(
    db,
    Array.from({ length: NODES }, (_, i) => ({ id: `pack-${i}`, description: `pack number ${i}` })),
  )
  await db.destroy()
  return dir
}

/** `serve` on its own SQLite file, whatever backends the run tests. */
const serve = (dir: string, ...args: string[]) => spawnServe(['--port', '0', '--host', '127.0.0.1', '--data', dir, ...args])

const documented = (dir: string) => {
  const db = new Database(join(dir, 'registry.db'), { readonly: true })
  try {
    return db.query<{ n: number }, []>('select count(*) as n from node_documents').get()!.n
  } finally {
    db.close()
  }
}

test('nodes without documents are served from their rows, and their documents are filled in the background', async () => {
  const dir = await storeWithoutDocuments()
  const { url, proc } = await serve(dir)
  const node = await (await fetch(`${url}/nodes/pack-7`)).json()
  expect(node).toMatchObject({ id: 'pack-7', description: 'pack number 7', publisher: { id: 'acme' } })
  for (let i = 0; i < 100 && documented(dir) < NODES; i++) await Bun.sleep(100)
  expect(documented(dir)).toBe(NODES)
  // The documents answer the same as the rows did.
  expect(await (await fetch(`${url}/nodes/pack-7`)).json()).toEqual(node)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  expect(await new Response(proc.stderr).text()).toContain(`"event":"documents.filled","nodes":${NODES}`)
})

test('a read-only registry serves them from their rows and writes nothing', async () => {
  const dir = await storeWithoutDocuments()
  const { url, proc } = await serve(dir, '--read-only')
  expect(((await (await fetch(`${url}/nodes?limit=5`)).json()) as { nodes: unknown[] }).nodes).toHaveLength(5)
  await Bun.sleep(1000)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  expect(documented(dir)).toBe(0)
})
