/**
 * A data directory whose blobs/ is on another file system than its tmp/ (a symlink to another mount): serve refuses
 * to start, in one line that says the way out, where every upload failed with EXDEV (a 500).
 */
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_STORAGE } from '../support/backends'
import { ensureBinary, startServer } from '../support/binary'

// tmpfs, a file system of its own on Linux.
const SHM = '/dev/shm'
const otherFileSystem = existsSync(SHM) && statSync(SHM).dev !== statSync(tmpdir()).dev
const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-xdev-'))
const elsewhere = otherFileSystem ? mkdtempSync(join(SHM, 'registry-mirror-e2e-xdev-')) : ''
afterAll(() => {
  rmSync(data, { recursive: true, force: true })
  if (elsewhere) rmSync(elsewhere, { recursive: true, force: true })
})

// On object storage, blobs/ is not used: only a disk registry is checked.
test.skipIf(!otherFileSystem || !!TEST_STORAGE)('serve on disk refuses blobs/ on another file system than tmp/, and says why', async () => {
  await ensureBinary()
  symlinkSync(elsewhere, join(data, 'blobs'))
  // A server that starts (without the check) is stopped, whatever the outcome.
  const outcome = await startServer(data).then(
    async (server) => (await server.stop(), 'started'),
    (err: Error) => err.message,
  )
  expect(outcome).toMatch(/blobs and .*tmp are on different file systems: uploads are moved .* by a rename/)
})
