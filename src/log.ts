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
