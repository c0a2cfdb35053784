/** Polling for a state reached asynchronously (a backend back, another instance caught up). */

/** Polls `check` every `everyMs` until it passes, at most `withinMs` (then throws naming `what`); returns the ms it took. */
export async function eventually(
  check: () => Promise<boolean>,
  { withinMs = 10_000, everyMs = 50, what = 'the condition' }: { withinMs?: number; everyMs?: number; what?: string } = {},
): Promise<number> {
  const started = performance.now()
  while (!(await check())) {
    if (performance.now() - started > withinMs) throw new Error(`${what} did not hold within ${withinMs} ms`)
    await Bun.sleep(everyMs)
  }
  return performance.now() - started
}
