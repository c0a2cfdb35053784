/** Reading a command's options: node's parseArgs, with a negative number after a string option taken as its value. */
import { parseArgs, type ParseArgsConfig } from 'node:util'

type Options = NonNullable<ParseArgsConfig['options']>

/**
 * `--name -5` -> `--name=-5` when `name` takes a value. parseArgs refuses a value starting with a dash as ambiguous,
 * and its message then stands alone, hiding every other problem of the command line; written with `=`, the value
 * reaches the command's own checks (a range, a positive number) with the rest. Boolean options take no value, so
 * a number after one stays an argument of its own. Nothing after `--` is touched.
 */
export function joinNegativeValues(argv: readonly string[], options: Options): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') return [...out, ...argv.slice(i)]
    const next = argv[i + 1]
    const takesValue = arg.startsWith('--') && !arg.includes('=') && options[arg.slice(2)]?.type === 'string'
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`)
      i++
    } else out.push(arg)
  }
  return out
}

/** parseArgs for every command: `args` with negative values joined to their options first. */
export function parseCommandArgs<T extends ParseArgsConfig & { args: string[]; options: Options }>(
  config: T,
): ReturnType<typeof parseArgs<T>> {
  return parseArgs({ ...config, args: joinNegativeValues(config.args, config.options) })
}

/** A flag's value as a whole number written in digits only, or undefined: `Number` alone takes `''`, `1e3` and `0x10`. */
export function wholeNumber(text: unknown): number | undefined {
  const n = typeof text === 'string' && /^\d{1,16}$/.test(text) ? Number(text) : undefined
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined
}
