/** Entry point of the executable: runs the CLI with the real process around it. */
import { runCli } from './cli'
import { startAgainWithHeapGrowth } from './heap-growth'
import { forTerminal } from './io'

// A server's heap: started again, at once, with the runtime's heap growth set for it (heap-growth.ts).
if (Bun.argv[2] === 'serve') startAgainWithHeapGrowth()

const stopSignal = new Promise<string>((resolve) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve(signal))
})

/**
 * The command's output: in order, the lines of one turn of the event loop in one write, and `written()` once all of
 * it is out. A pipe takes 64 KiB at a time, and exiting with more in hand cut a long `audit --json | jq` short. Once
 * the reader has gone (`... | head -1`), the rest is dropped.
 */
function commandOutput() {
  let held = ''
  let writing = Promise.resolve()
  let readerGone = false
  const writeHeld = () => {
    const text = held
    held = ''
    writing = writing.then(async () => {
      if (readerGone) return
      await Bun.write(Bun.stdout, text).catch(() => (readerGone = true))
    })
  }
  return {
    line(text: string) {
      if (!held) queueMicrotask(writeHeld)
      held += text + '\n'
    },
    written() {
      if (held) writeHeld()
      return writing
    },
  }
}

const output = commandOutput()
const code = await runCli(Bun.argv.slice(2), {
  out: (line) => output.line(forTerminal(line)),
  err: (line) => process.stderr.write(forTerminal(line) + '\n'),
  env: process.env,
  stopSignal,
  isTerminal: process.stderr.isTTY === true,
})
await output.written()
process.exit(code)
