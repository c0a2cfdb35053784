/** `registry-mirror audit`: the audit log, newest first, read from the store in the data directory. */
import { wholeNumber } from './cli-args'
import { parseTime } from './domain/timestamps'
import type { Io } from './io'
import { readAudit, type AuditEntry } from './services/audit'
import { parse, UsageError, withDeps, type Flags } from './cli-credentials'

export const AUDIT_HELP = `Usage: registry-mirror audit [--since TIME] [--limit N] [--json] [--data DIR | --database URL]

Prints the audit log newest first: claims, bans, unbans, status changes, deletions, publishers,
members and tokens created or deleted, and user changes, each with who did it and from where.
--since TIME   only entries at or after TIME (RFC 3339, e.g. 2026-01-02 or 2026-01-02T03:04:05Z)
--limit N      at most N entries (default 50, at most 1000)
--json         one JSON object per line, as GET /admin/audit lists them`

function auditLine(e: AuditEntry): string {
  const actor = `${e.actor_id ?? '-'}${e.actor_address ? `@${e.actor_address}` : ''}`
  const change = [e.before === null ? '' : JSON.stringify(e.before), e.after === null ? '' : JSON.stringify(e.after)]
  const detail = change[0] && change[1] ? `${change[0]} -> ${change[1]}` : change[0] || change[1]
  return [e.at, actor, e.action, `${e.target_kind}:${e.target_id}`, detail].filter(Boolean).join('  ')
}

export async function auditCommand(argv: string[], io: Io, storeOf: (flags: Flags) => string): Promise<number> {
  const { flags } = parse(argv, ['since', 'limit'], ['json'])
  if (flags.help) return (io.out(AUDIT_HELP), 0)
  const since = flags.since === undefined ? undefined : parseTime(String(flags.since))
  if (flags.since !== undefined && since === undefined) throw new UsageError(`--since: expected an RFC 3339 time (got "${flags.since}")`)
  const limit = flags.limit === undefined ? 50 : wholeNumber(flags.limit)
  if (limit === undefined || limit < 1 || limit > 1000) {
    throw new UsageError(`--limit: expected a whole number from 1 to 1000 (got "${flags.limit}")`)
  }
  const page = await withDeps(storeOf(flags), ({ db }) => readAudit(db, { since, limit }))
  for (const entry of page.entries) io.out(flags.json ? JSON.stringify(entry) : auditLine(entry))
  return 0
}
