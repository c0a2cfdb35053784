/** Entry point of the executable: runs the CLI with the real process around it. */
import { runCli } from './cli'

const stopSignal = new Promise<string>((resolve) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve(signal))
})

const code = await runCli(Bun.argv.slice(2), {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
  env: process.env,
  stopSignal,
  isTerminal: process.stderr.isTTY === true,
})
process.exit(code)
