/**
 * A bundle's rows, checked whole before any is applied: every line of every chunk parses as a feed entry, the
 * serials increase across the chunks, and the manifest says what the rows are (their chunks in order, their
 * counts, and `since`/`until` the serials around them). A bad row found while applying would leave the chunks
 * before it applied.
 */
import * as v from 'valibot'
import type { BundleManifest } from '../../domain/bundle'
import { FeedEnvelopeSchema, type FeedEnvelope } from '../../domain/feed'
import { BundleError } from './bundle-reader'

const ChangesSchema = FeedEnvelopeSchema.entries.changes

/** The entries of one chunk (NDJSON), checked as a feed page's. */
export function parseRows(name: string, text: string): FeedEnvelope['changes'] {
  const lines = text.split('\n')
  const changes: unknown[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]) continue
    try {
      changes.push(JSON.parse(lines[i]!))
    } catch (err) {
      throw new BundleError(`${name}, line ${i + 1}: not JSON (${(err as Error).message}); the bundle is damaged`)
    }
  }
  const parsed = v.safeParse(ChangesSchema, changes)
  if (!parsed.success) {
    const issue = parsed.issues[0]
    const at = issue.path?.[0]?.key
    const line = typeof at === 'number' ? `, entry ${at + 1}` : ''
    const field =
      issue.path
        ?.slice(1)
        .map((p) => String(p.key))
        .join('.') || 'entry'
    throw new BundleError(`${name}${line}: ${field}: ${issue.message}; the bundle is damaged`)
  }
  return parsed.output
}

/** What the first pass learns of the rows, chunk by chunk in the order of the tar (the order they apply in). */
export class RowsSeen {
  private readonly chunks: { name: string; changes: number }[] = []
  private last: number | undefined
  private first: number | undefined

  add(name: string, changes: FeedEnvelope['changes']): void {
    for (const c of changes) {
      // Rows that go backwards or repeat cannot be applied in order (the feed's own rule).
      if (this.last !== undefined && c.serial <= this.last)
        throw new BundleError(`${name}: the serials are out of order at ${c.serial}; the bundle is damaged`)
      this.first ??= c.serial
      this.last = c.serial
    }
    this.chunks.push({ name, changes: changes.length })
  }

  /**
   * The manifest against the rows: the chunks it lists, in order, with their counts; `since` before the first
   * serial and `until` the last (an export's `until` is its registry's newest serial, which is always some row's).
   * An `until` past the rows would make every later bundle from that registry "nothing to do"; one before them
   * would move the cursor back.
   */
  checkManifest(manifest: BundleManifest): void {
    manifest.rows.forEach((r, i) => {
      const chunk = this.chunks[i]
      if (chunk?.name !== r.name)
        throw new BundleError(`the rows are not in the order of the manifest (at ${r.name}); the bundle is damaged`)
      if (chunk.changes !== r.changes)
        throw new BundleError(`${r.name}: ${chunk.changes} rows, the manifest says ${r.changes}; the bundle is damaged`)
    })
    if (manifest.until < manifest.since)
      throw new BundleError(`the manifest's until (${manifest.until}) is before its since (${manifest.since})`)
    if (this.first !== undefined && this.first <= manifest.since)
      throw new BundleError(
        `the manifest says the rows follow serial ${manifest.since}, but they start at ${this.first}; the bundle is damaged`,
      )
    const end = this.last ?? manifest.since
    if (manifest.until !== end)
      throw new BundleError(`the manifest says the rows end at serial ${manifest.until}, but they end at ${end}; the bundle is damaged`)
  }
}
