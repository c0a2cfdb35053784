/** Reading the audit log (who did what, when, from where), newest first, for admins over HTTP and operators on the command line. */
import * as v from 'valibot'
import { listAudit } from '../store/changes'
import type { Store } from '../store/db'

export const AuditEntrySchema = v.object({
  id: v.number(),
  at: v.string(),
  actor_id: v.nullable(v.string()),
  actor_address: v.string(),
  action: v.string(),
  target_kind: v.string(),
  target_id: v.string(),
  before: v.unknown(),
  after: v.unknown(),
})

export const AuditPageSchema = v.object({
  entries: v.array(AuditEntrySchema),
  /** Pass as `before` for the next (older) page; null on the last page. */
  next: v.nullable(v.number()),
})

export type AuditEntry = v.InferOutput<typeof AuditEntrySchema>
export type AuditPage = v.InferOutput<typeof AuditPageSchema>

export const MAX_AUDIT_PAGE = 1000

const parse = (json: string | null) => (json === null ? null : (JSON.parse(json) as unknown))

/** One page of entries at or after `since`, older than the entry `before`. */
export async function readAudit(db: Store, q: { since?: string; before?: number; limit: number }): Promise<AuditPage> {
  const limit = Math.min(q.limit, MAX_AUDIT_PAGE)
  // One more than asked says whether an older page exists.
  const rows = await listAudit(db, { ...q, limit: limit + 1 })
  const entries = rows.slice(0, limit).map((r) => ({
    id: r.id,
    at: r.at,
    actor_id: r.actor_id,
    actor_address: r.actor_address,
    action: r.action,
    target_kind: r.target_kind,
    target_id: r.target_id,
    before: parse(r.before_json),
    after: parse(r.after_json),
  }))
  return { entries, next: rows.length > limit ? entries[entries.length - 1]!.id : null }
}
