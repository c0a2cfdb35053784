/** The command line run in-process, as a test sees it: what a command prints on stdout and stderr, and its exit code. */
import { runCli } from '../../src/cli'
import type { Io } from '../../src/io'

/** An Io that keeps each line a command prints; `env` is all of its environment (none of the test's own). */
export function capturedIo(env: Record<string, string> = {}): { out: string[]; err: string[]; io: Io } {
  const out: string[] = []
  const err: string[] = []
  return { out, err, io: { out: (l) => out.push(l), err: (l) => err.push(l), env, stopSignal: new Promise<string>(() => {}) } }
}

/** Runs `registry-mirror ...argv` with `env`: its exit code and the lines it printed. */
export async function runCommand(argv: string[], env: Record<string, string> = {}) {
  const { out, err, io } = capturedIo(env)
  return { code: await runCli(argv, io), out, err }
}
