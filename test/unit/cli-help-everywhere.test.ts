/** "Every command also takes --help" (README): `help` and `version` included, on stdout with exit 0. */
import { expect, test } from 'bun:test'
import { runCommand } from '../support/cli'

test('help --help and help -h print the general usage', async () => {
  for (const flag of ['--help', '-h']) {
    const { code, out, err } = await runCommand(['help', flag])
    expect({ code, err }).toEqual({ code: 0, err: [] })
    expect(out[0]).toStartWith('registry-mirror: a node registry in one executable')
  }
})

test('version --help prints how version is used, not the version', async () => {
  const { code, out, err } = await runCommand(['version', '--help'])
  expect({ code, err }).toEqual({ code: 0, err: [] })
  expect(out[0]).toStartWith('Usage: registry-mirror version')
})
