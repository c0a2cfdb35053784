/**
 * How far JavaScriptCore lets its heap grow past what its last full collection kept, before it collects it whole: a
 * setting the runtime reads from the environment once, as the process starts (`BUN_JSC_heapGrowthMaxIncrease`, 2
 * unless set). A server's peak memory is mostly that allowance over what it holds (the index, the caches): at 100,000
 * nodes the mix's peak was 518-570 MiB at the runtime's default and 387-390 MiB at 0.5, for about a fifth more CPU a
 * request (docs/benchmarks.md, "The collector's cost, by thread"). `serve` therefore starts itself again with 0.5 in its
 * environment (`process.execve`: the same process, its image replaced before it has done anything) unless the
 * environment says already; an operator who sets the variable chooses for it.
 */
export const HEAP_GROWTH_VARIABLE = 'BUN_JSC_heapGrowthMaxIncrease'
export const SERVER_HEAP_GROWTH = '0.5'

/**
 * Replaces this process with itself, the same arguments and `HEAP_GROWTH_VARIABLE` set, unless it is set; returns
 * only when it is set (or when the system refuses: the server then runs with the runtime's default).
 */
export function startAgainWithHeapGrowth(env: NodeJS.ProcessEnv = process.env): void {
  if (env[HEAP_GROWTH_VARIABLE] !== undefined) return
  // Under the runtime's sampling profiler (from source, `bun --cpu-prof`), the process died at the exec, by a signal,
  // with no word: it runs at the runtime's default instead.
  if (process.execArgv.some((flag) => flag.startsWith('--cpu-prof'))) return
  // A compiled executable's own arguments come back when it starts (its script is inside it); from source, the
  // runtime's flags and the script are given again.
  const compiled = Bun.main.startsWith('/$bunfs/')
  const args = compiled ? Bun.argv.slice(2) : [...process.execArgv, Bun.main, ...Bun.argv.slice(2)]
  try {
    process.execve?.(process.execPath, [process.execPath, ...args], { ...env, [HEAP_GROWTH_VARIABLE]: SERVER_HEAP_GROWTH })
  } catch {
    // Not allowed here (a sandbox without exec): the runtime's default, and nothing else lost.
  }
}
