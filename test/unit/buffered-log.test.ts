/** The server's log writer: the lines of one turn of the event loop go out in one write. */
import { expect, test } from 'bun:test'
import { bufferedWriter, createLog } from '../../src/log'

test('lines written in one turn reach the sink together, in order, after the turn', async () => {
  const chunks: string[] = []
  const log = createLog({ write: bufferedWriter((text) => chunks.push(text)) })
  log.info('a', { n: 1 })
  log.warn('b')
  expect(chunks).toEqual([])
  await new Promise((resolve) => setImmediate(resolve))
  expect(chunks.length).toBe(1)
  expect(
    chunks[0]!
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).event),
  ).toEqual(['a', 'b'])
})

test('a long turn does not hold more than 512 lines, and flush() writes what is left', () => {
  const chunks: string[] = []
  const write = bufferedWriter((text) => chunks.push(text))
  for (let i = 0; i < 600; i++) write(`line ${i}`)
  expect(chunks.length).toBe(1)
  expect(chunks[0]!.split('\n').length - 1).toBe(512)
  write.flush()
  expect(chunks.join('').split('\n').length - 1).toBe(600)
})
