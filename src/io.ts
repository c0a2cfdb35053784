/** What a command gets from the process around it: output lines, the environment, and the stop signal. */
export interface Io {
  out(line: string): void
  err(line: string): void
  env: Record<string, string | undefined>
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT). */
  stopSignal: Promise<string>
  /** Whether stderr is a terminal (progress bars are drawn only there). */
  isTerminal?: boolean
}

/** C0 controls but tab and newline, DEL, and C1 controls: a terminal acts on them (colours, cursor, title). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * A line as a terminal may safely show it: each control character becomes its `\uXXXX` escape. Output holds data
 * from elsewhere (a bundle's registry name, a user's name, an upstream's reasons); an escape sequence in it must
 * not reach the operator's terminal. JSON output stays valid JSON meaning the same (it escapes C0 itself).
 */
export function forTerminal(line: string): string {
  return line.replace(CONTROL, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}
