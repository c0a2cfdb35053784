/**
 * Which blob stores hand out files that may be removed while their blob is still stored: object storage's local
 * copies (evicted least recently used first), which a remembered download opens again; not the disk's own files,
 * which stay until their blob is deleted (opening them again costs a download a tenth of its CPU). No network.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBlobCache } from '../../src/blobs/disk-cache'
import { createDiskBlobStore } from '../../src/blobs/disk'
import { createS3BlobStore } from '../../src/blobs/s3'
import { BACKEND_SETTINGS, loadConfig } from '../../src/config'
import { s3Settings } from '../../src/serve-backends'

test('object storage with local copies evicts them; without copies, and the disk, do not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-mirror-evicts-'))
  try {
    const disk = createDiskBlobStore(dir)
    const { config } = loadConfig(
      { flags: { storage: 's3://archives', 's3-access-key-id': 'AKIDEXAMPLE', 's3-secret-access-key': 'x' }, env: {} },
      BACKEND_SETTINGS,
    )
    const settings = s3Settings(config!, config!.storage!)
    expect(createS3BlobStore(settings, disk, { cache: createBlobCache(join(dir, 'cache'), 1024) }).evictsCopies).toBe(true)
    expect(createS3BlobStore(settings, disk).evictsCopies).toBe(false)
    expect(disk.evictsCopies).toBeFalsy()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
