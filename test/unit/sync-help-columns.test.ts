/** `sync --help` lists its options in two columns: every description starts where the others do. */
import { expect, test } from 'bun:test'
import { SYNC_HELP } from '../../src/sync-command'

test('every option of sync --help, long names included, has its description and env line in one column', () => {
  const lines = SYNC_HELP.split('\n')
  const options = lines.filter((l) => /^ {2}--/.test(l))
  expect(options.length).toBeGreaterThan(10)
  expect(options.some((l) => l.startsWith('  --storage-cache-bytes '))).toBe(true)
  const column = (l: string) => /^ {2}--\S+ +/.exec(l)![0].length
  const envColumn = (l: string) => /^ +/.exec(l)![0].length
  const first = column(options[0]!)
  for (const l of options) expect(column(l)).toBe(first)
  for (const l of lines.filter((l) => /^ +env /.test(l))) expect(envColumn(l)).toBe(first)
})
