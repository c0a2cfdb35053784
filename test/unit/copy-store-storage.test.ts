/** `copy-store` when the bucket fails: the line says the bucket's own words, not the server's "try again shortly". */
import { afterEach, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { tempDirs } from '../support/tmp'
import { runCommand } from '../support/cli'

const dirs = tempDirs('copy-store-storage')
afterEach(dirs.cleanup)

const run = (env: Record<string, string>, ...argv: string[]) => runCommand(argv, env)

test('a bucket away: copy-store says why (a refused connection), exit 1, before the database is touched', async () => {
  const data = dirs.make()
  expect((await run({}, 'users', 'create', '--id', 'al', '--email', 'al@x.io', '--name', 'Al', '--data', data)).code).toBe(0)
  const bytes = Buffer.from('an archive')
  const sha = createHash('sha256').update(bytes).digest('hex')
  mkdirSync(join(data, 'blobs', sha.slice(0, 2), sha.slice(2, 4)), { recursive: true })
  writeFileSync(join(data, 'blobs', sha.slice(0, 2), sha.slice(2, 4), sha), bytes)
  const env = { AWS_ACCESS_KEY_ID: 'key', AWS_SECRET_ACCESS_KEY: 'secret' }
  // Port 1 on the loopback: nothing listens there, the connection is refused at once. The archives go first, so
  // the database (also on port 1) is never reached.
  const res = await run(
    env,
    'copy-store',
    ...['--data', data, '--database', 'postgres://u@127.0.0.1:1/db', '--storage', 's3://bucket/p'],
    ...['--s3-endpoint', 'http://127.0.0.1:1', '--s3-region', 'us-east-1'],
  )
  expect(res.code).toBe(1)
  expect(res.out).toEqual([])
  expect(res.err).toHaveLength(1)
  expect(res.err[0]).toMatch(/^copy failed \(the database was left as it was\): the archive storage failed: \S.*(refused|connect)/i)
})
