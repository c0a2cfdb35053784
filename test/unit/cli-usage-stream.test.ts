/**
 * Usage asked for goes to stdout (exit 0); usage given because the command line said too little to run goes to
 * stderr (exit 2), as for every other bad usage (docs/decisions.md, `help TOPIC`): a bare `users`, `tokens`,
 * `blobs` or `fixture` printed it on stdout with exit 2, so `registry-mirror users > out` hid the complaint.
 */
import { expect, test } from 'bun:test'
import { runCommand } from '../support/cli'

const commands = ['users', 'tokens', 'blobs', 'fixture']

test('a bare command with subcommands (or a bare registry-mirror) prints its usage on stderr and exits 2', async () => {
  for (const argv of [[], ...commands.map((c) => [c])]) {
    const run = await runCommand(argv)
    expect({ argv, code: run.code, out: run.out }).toEqual({ argv, code: 2, out: [] })
    expect(run.err.join('\n')).toContain('Usage')
  }
})

test('usage asked for (--help, help TOPIC) is printed on stdout with exit 0', async () => {
  const asked = [
    ['--help'],
    ['help'],
    ...commands.flatMap((c) => [
      [c, '--help'],
      ['help', c],
    ]),
    ['blobs', '-h'],
  ]
  for (const argv of asked) {
    const run = await runCommand(argv)
    expect({ argv, code: run.code, err: run.err }).toEqual({ argv, code: 0, err: [] })
    expect(run.out.join('\n')).toContain('Usage')
  }
})
