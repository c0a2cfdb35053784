/** `blobs check|sweep` when the bucket fails: one line that says the bucket's own words, exit 1. */
import { afterEach, expect, test } from 'bun:test'
import { tempDirs } from '../support/tmp'
import { runCommand } from '../support/cli'

const dirs = tempDirs('cli-blobs-storage')
afterEach(dirs.cleanup)

const run = (env: Record<string, string>, ...argv: string[]) => runCommand(argv, env)

test('a bucket away: the sweep and the check say why in one line (not "try again shortly"), exit 1', async () => {
  const data = dirs.make()
  expect((await run({}, 'users', 'create', '--id', 'al', '--email', 'al@x.io', '--name', 'Al', '--data', data)).code).toBe(0)
  const env = { AWS_ACCESS_KEY_ID: 'key', AWS_SECRET_ACCESS_KEY: 'secret' }
  // Port 1 on the loopback: nothing listens there, the connection is refused at once.
  const away = ['--data', data, '--storage', 's3://bucket/p', '--s3-endpoint', 'http://127.0.0.1:1', '--s3-region', 'us-east-1']
  for (const command of ['check', 'sweep']) {
    const res = await run(env, 'blobs', command, ...away)
    expect(res.code).toBe(1)
    expect(res.out).toEqual([])
    expect(res.err).toHaveLength(1)
    expect(res.err[0]).toMatch(/^the archive storage failed: \S.*(refused|connect)/i)
  }
})
