/** Structured logging: one JSON object per line on stderr. Callers pass event names and plain data, never secrets. */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export type LogFields = Record<string, string | number | boolean | null | undefined>

export interface Log {
  debug(event: string, fields?: LogFields): void
  info(event: string, fields?: LogFields): void
  warn(event: string, fields?: LogFields): void
  error(event: string, fields?: LogFields): void
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export function createLog(opts: { level?: LogLevel; write?: (line: string) => void } = {}): Log {
  const min = RANK[opts.level ?? 'info']
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'))
  const emit =
    (level: LogLevel) =>
    (event: string, fields: LogFields = {}) => {
      if (RANK[level] < min) return
      write(JSON.stringify({ time: new Date().toISOString(), level, event, ...fields }))
    }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
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
