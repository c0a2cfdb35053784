/** Small pieces every page uses: dates, counts, statuses, licenses, and links to other sites. JSX escapes all text. */
import type { Child } from 'hono/jsx'
import type { NodeJson, VersionJson } from '../domain/wire'
import { count } from '../domain/plural'

/** The day, which is what a person compares; the full instant stays in `datetime`. */
export const DateTime = ({ iso }: { iso: string }) => <time datetime={iso}>{iso.slice(0, 10)}</time>

const VERSION_BADGES: Record<VersionJson['status'], { label: string; tone: string }> = {
  NodeVersionStatusActive: { label: 'Active', tone: 'good' },
  NodeVersionStatusPending: { label: 'Pending review', tone: 'warn' },
  NodeVersionStatusFlagged: { label: 'Flagged', tone: 'bad' },
  NodeVersionStatusBanned: { label: 'Banned', tone: 'bad' },
  NodeVersionStatusDeleted: { label: 'Deleted', tone: 'bad' },
}

export const VersionBadges = ({ version }: { version: VersionJson }) => {
  const badge = VERSION_BADGES[version.status]
  return (
    <>
      <span class={`badge ${badge.tone}`}>{badge.label}</span>
      {version.deprecated && <span class="badge warn">Deprecated</span>}
    </>
  )
}

/** The rating as "4.5 of 5", or nothing said when nobody has rated (a review is 1 to 5 stars, so 0 means none). */
export const rating = (node: Pick<NodeJson, 'rating'>) => (node.rating > 0 ? `${node.rating.toFixed(1)} of 5` : 'Not rated yet')

/** The publishing CLI sends the license as JSON text (`{"file": "LICENSE"}`, `{"text": "MIT"}`); others send a name. */
export function licenseText(license: string): string {
  const raw = license.trim()
  if (!raw || raw === '{}') return 'Not stated'
  try {
    const parsed = JSON.parse(raw) as unknown
    if (parsed && typeof parsed === 'object') {
      const { text, file } = parsed as { text?: unknown; file?: unknown }
      if (typeof text === 'string' && text.trim()) return text.trim()
      if (typeof file === 'string' && file.trim()) return `In the archive: ${file.trim()}`
      return 'Not stated'
    }
  } catch {}
  return raw
}

/** Only http(s) addresses become links (a `javascript:` repository URL stays text); other sites get no referrer. */
export const ExternalLink = ({ href, children }: { href: string; children?: Child }) =>
  /^https?:\/\/[^\s]+$/i.test(href) ? (
    <a href={href} rel="noopener noreferrer nofollow">
      {children ?? href}
    </a>
  ) : (
    <span>{children ?? href}</span>
  )

/**
 * Text from elsewhere inside a plain-text line (a page title): isolated between FSI and PDI, so a right-to-left
 * override in a name cannot reorder what follows it. In markup the same is `<bdi>`.
 */
export const isolated = (text: string) => `\u2068${text}\u2069`

/** A page's title past the first page of its list says which page it is: each page is a page of its own to a reader. */
export const paged = (title: string, page = 1, list = 'page') => (page > 1 ? `${title}, ${list} ${count(page)}` : title)

/** Long descriptions are cut at a word in lists; the node page shows them whole. */
export function excerpt(text: string, max = 220): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat.length <= max) return flat
  const cut = flat.slice(0, max)
  return `${cut.slice(0, cut.lastIndexOf(' ') > max * 0.6 ? cut.lastIndexOf(' ') : max).trimEnd()}…`
}

/** A command to paste, with a copy button the script reveals (without the script the text is still selectable). */
export const Command = ({ id, text, label }: { id: string; text: string; label: string }) => (
  <>
    <div class="command">
      <pre id={id}>{text}</pre>
      <button type="button" class="secondary" data-copy={id} aria-label={`Copy: ${label}`} hidden>
        Copy
      </button>
    </div>
    <p id={`${id}-status`} class="muted copy-status" role="status"></p>
  </>
)

/**
 * Previous and next links around the page shown ("Page N", and "of M" when the number of pages is known), named by
 * `label` for screen readers; `hasNext` where the number of pages is not known. Nothing when everything fits on the
 * first page. A page past the last links back to the last, when it is known.
 */
export function Pager(props: { label: string; page: number; pages?: number; hasNext?: boolean; href: (page: number) => string }) {
  const { label, page, pages, href } = props
  const hasNext = pages === undefined ? Boolean(props.hasNext) : page < pages
  if (page === 1 && !hasNext) return null
  return (
    <nav class="pager" aria-label={label}>
      <ul>
        {page > 1 && (
          <li>
            <a href={href(pages === undefined ? page - 1 : Math.min(page - 1, Math.max(pages, 1)))} rel="prev">
              Previous page
            </a>
          </li>
        )}
        {(pages === undefined || page <= pages) && (
          <li aria-current="page">
            Page {count(page)}
            {pages !== undefined && <> of {count(pages)}</>}
          </li>
        )}
        {hasNext && (
          <li>
            <a href={href(page + 1)} rel="next">
              Next page
            </a>
          </li>
        )}
      </ul>
    </nav>
  )
}
