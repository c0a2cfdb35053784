/**
 * `blobs check` on the intents of writers killed between their intent and their row: the bytes those intents hold
 * and the intents themselves are said (they were counted as referenced, and the check read "unreferenced: none").
 */
import { afterEach, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { intendBlobs } from '../../src/services/blob-intent'
import { openStore } from '../../src/store/db'
import { tempDirs } from '../support/tmp'
import { runCommand } from '../support/cli'

const dirs = tempDirs('blob-check-intents')
afterEach(dirs.cleanup)

const run = (...argv: string[]) => runCommand(argv)

test('check says which bytes only intents hold, how many intents there are and how many expired', async () => {
  const data = dirs.make()
  expect((await run('users', 'create', '--id', 'al', '--email', 'al@x.io', '--name', 'Al', '--data', data)).code).toBe(0)
  const blobs = createDiskBlobStore(data)
  const staged = await blobs.stage(new Blob(['bytes a killed upload committed']).stream(), 1000)
  await staged.commit()
  const db = await openStore(join(data, 'registry.db'))
  try {
    // A writer killed after its commit: its intent stays. Another killed two days ago, before its commit.
    await intendBlobs({ db, now: () => new Date() }, [staged.sha256])
    await intendBlobs({ db, now: () => new Date(Date.now() - 48 * 3600_000) }, ['0'.repeat(64)])
  } finally {
    await db.destroy()
  }
  const checked = await run('blobs', 'check', '--data', data)
  expect(checked.code).toBe(0)
  expect(checked.out).toContain('unreferenced: none')
  expect(checked.out).toContain(`held by blob intents only: 1 blob, ${'bytes a killed upload committed'.length} bytes`)
  const intents = checked.out.find((l) => l.startsWith('blob intents: '))
  expect(intents).toMatch(
    /^blob intents: 2, the oldest recorded \S+Z \(writers under way, or killed; 1 expired: the next sweep drops them\)$/,
  )
})
