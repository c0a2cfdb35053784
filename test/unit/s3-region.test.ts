/**
 * The S3 signing region from the settings as `serve` and `copy-store` read them: us-east-1 unless a flag or the
 * environment names one, for AWS and any other endpoint. Read off a presigned URL's credential scope (no network).
 */
import { describe, expect, test } from 'bun:test'
import type { BlobStore } from '../../src/blobs/blob-store'
import { createS3BlobStore } from '../../src/blobs/s3'
import { BACKEND_SETTINGS, loadConfig } from '../../src/config'
import { s3Settings } from '../../src/serve-backends'

const SHA = 'a'.repeat(64)
const BASE = { storage: 's3://archives', 's3-access-key-id': 'AKIDEXAMPLE', 's3-secret-access-key': 'wJalrXUtnFEMI' }

/** The region a presigned GET of the bucket is signed for (`X-Amz-Credential=KEY/DATE/REGION/s3/aws4_request`). */
function signingRegion(flags: Record<string, string>, env: Record<string, string> = {}): string {
  const { config, problems } = loadConfig({ flags: { ...BASE, ...flags }, env }, BACKEND_SETTINGS)
  expect(problems).toEqual([])
  const store = createS3BlobStore(s3Settings(config!, config!.storage!), {} as BlobStore)
  const credential = new URL(store.presign!(SHA, 300)).searchParams.get('X-Amz-Credential')!
  expect(credential).toMatch(/^AKIDEXAMPLE\/\d{8}\/[^/]+\/s3\/aws4_request$/)
  return credential.split('/')[2]!
}

describe('S3 signing region', () => {
  test('unset: us-east-1, for another endpoint (where the client would say "auto") as for AWS', () => {
    expect(signingRegion({ 's3-endpoint': 'http://127.0.0.1:9000' })).toBe('us-east-1')
    expect(signingRegion({})).toBe('us-east-1')
  })

  test('the flag, then ours, then AWS_REGION, then AWS_DEFAULT_REGION', () => {
    const endpoint = { 's3-endpoint': 'http://127.0.0.1:9000' }
    const env = { REGISTRY_MIRROR_S3_REGION: 'eu-central-1', AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'ap-south-1' }
    expect(signingRegion({ ...endpoint, 's3-region': 'us-west-2' }, env)).toBe('us-west-2')
    expect(signingRegion(endpoint, env)).toBe('eu-central-1')
    expect(signingRegion(endpoint, { AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'ap-south-1' })).toBe('eu-west-1')
    expect(signingRegion(endpoint, { AWS_DEFAULT_REGION: 'ap-south-1' })).toBe('ap-south-1')
  })
})
