/**
 * A command's usage text, printed as asked for (`--help`, `help TOPIC`: on stdout, exit 0) or as the answer to a
 * command line that says too little to run (a bare `users`: on stderr, exit 2), as every other bad usage is.
 */
import type { Io } from './io'

export function printUsage(io: Io, text: string, asked: boolean): number {
  if (!asked) return (io.err(text), 2)
  io.out(text)
  return 0
}
