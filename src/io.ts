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
