/** Structured logging: one JSON object per line on stderr. Callers pass event names and plain data, never secrets. */
import { AsyncLocalStorage } from 'node:async_hooks'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export type LogFields = Record<string, string | number | boolean | null | undefined>

export interface Log {
  debug(event: string, fields?: LogFields): void
  info(event: string, fields?: LogFields): void
  warn(event: string, fields?: LogFields): void
  error(event: string, fields?: LogFields): void
  /**
   * Runs `fn` so that every line this log writes meanwhile, from any function `fn` calls or awaits, carries
   * `fields` too. The HTTP layer runs each request within `{ requestId }`, so services logging through
   * `deps.log` tag their lines with the request's id without being handed anything.
   */
  within<T>(fields: LogFields, fn: () => T): T
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export function createLog(opts: { level?: LogLevel; write?: (line: string) => void } = {}): Log {
  const min = RANK[opts.level ?? 'info']
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'))
  // One scope per log, not per process: two apps in one process (tests) keep their contexts apart.
  const scope = new AsyncLocalStorage<LogFields>()
  const emit =
    (level: LogLevel) =>
    (event: string, fields: LogFields = {}) => {
      if (RANK[level] < min) return
      write(JSON.stringify({ time: new Date().toISOString(), level, event, ...scope.getStore(), ...fields }))
    }
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    within: (fields, fn) => scope.run({ ...scope.getStore(), ...fields }, fn),
  }
}

export const silentLog: Log = createLog({ write: () => {} })

/**
 * A `write` for createLog that gathers the lines of one turn of the event loop and writes them at once: one
 * system call for many request lines instead of one each. Whatever is gathered is written at exit too.
 */
export function bufferedWriter(sink: (text: string) => void = (text) => process.stderr.write(text)) {
  let lines: string[] = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (!lines.length) return
    const text = lines.join('\n') + '\n'
    lines = []
    sink(text)
  }
  process.once('exit', flush)
  const write = (line: string) => {
    lines.push(line)
    if (lines.length >= 512) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  return Object.assign(write, { flush })
}
