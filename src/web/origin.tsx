/**
 * What the pages say about mirrored data: where a publisher or node came from (an upstream's address, or an
 * imported bundle), when that upstream was last synced, and whether this server follows it now and how that goes.
 * Upstream addresses and instance ids are data from elsewhere: shown as text, linked only when they are http(s), and
 * never with a user, query or fragment (credentials).
 */
import { withoutUrlSecrets } from '../domain/urls'
import type { Deps } from '../services/deps'
import { describeOrigins, type MirrorStatus, type Provenance, type Upstream } from '../services/mirror/provenance'
import type { UpstreamState } from '../services/mirror/runtime'
import { ExternalLink } from './format'

/** The provenance of the mirrored entities a page shows, and the instant their ages are told from. */
export interface Origins {
  of: Map<string, Provenance>
  now: Date
}

export async function loadOrigins(deps: Deps, kind: 'publisher' | 'node', ids: readonly string[]): Promise<Origins> {
  return { of: await describeOrigins(deps, kind, ids), now: deps.now() }
}

const RELATIVE = new Intl.RelativeTimeFormat('en', { numeric: 'always' })
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
]

/** "3 hours ago"; "just now" under a minute, and for times ahead of this server's clock. */
export function ago(iso: string, now: Date): string {
  const seconds = (now.getTime() - Date.parse(iso)) / 1000
  if (!(seconds >= 60)) return 'just now'
  const [unit, size] = UNITS.find(([, size]) => seconds >= size)!
  return RELATIVE.format(-Math.floor(seconds / size), unit)
}

/** The words a person reads, with the exact instant in `datetime` (and on hover). */
export const Ago = ({ iso, now }: { iso: string; now: Date }) => (
  <time datetime={iso} title={`${iso.slice(0, 19).replace('T', ' ')} UTC`}>
    {ago(iso, now)}
  </time>
)

/** An upstream as a short name for lists: the host (and path) of an http(s) address, the text itself otherwise. */
function shortName(upstream: Upstream): string {
  if (upstream.kind === 'bundle') return 'an imported bundle'
  if (!/^https?:\/\//i.test(upstream.id)) return upstream.id
  try {
    const url = new URL(upstream.id)
    return url.host + url.pathname.replace(/\/+$/, '')
  } catch {
    return upstream.id
  }
}

const STATES: Record<UpstreamState | 'unfollowed', { badge: string; tone: string }> = {
  ok: { badge: 'Up to date', tone: 'good' },
  stale: { badge: 'Stale', tone: 'warn' },
  unreachable: { badge: 'Upstream unreachable', tone: 'bad' },
  unfollowed: { badge: 'Not followed', tone: 'neutral' },
}

/** Where it came from, as a phrase: the address (a link when http(s)), or the bundle and the registry it came from. */
function Source({ upstream }: { upstream: Upstream }) {
  if (upstream.kind === 'bundle') {
    return upstream.instance ? (
      <>
        an imported bundle (exported by registry <code>{upstream.instance}</code>)
      </>
    ) : (
      <>an imported bundle</>
    )
  }
  return <ExternalLink href={withoutUrlSecrets(upstream.id)} />
}

function LastSync({ upstream, now }: { upstream: Upstream; now: Date }) {
  const verb = upstream.kind === 'bundle' ? 'imported' : 'synced'
  return upstream.lastSuccessAt ? (
    <>
      It was last {verb} <Ago iso={upstream.lastSuccessAt} now={now} />.
    </>
  ) : (
    <>No {upstream.kind === 'bundle' ? 'import' : 'sync'} from it has completed yet.</>
  )
}

function Following({ upstream, now }: { upstream: Upstream; now: Date }) {
  const state = STATES[upstream.followed ?? 'unfollowed']
  const badge = <span class={`badge ${state.tone}`}>{state.badge}</span>
  switch (upstream.followed) {
    case 'ok':
      return <p>{badge} This server follows it and its last sync succeeded in time.</p>
    case 'stale':
      return <p>{badge} This server follows it, but has not synced with it successfully for too long: this copy may be behind.</p>
    case 'unreachable':
      return (
        <p>
          {badge} This server follows it, but could not reach it
          {upstream.lastAttemptAt && (
            <>
              {' '}
              at its last try, <Ago iso={upstream.lastAttemptAt} now={now} />
            </>
          )}
          : this copy may be behind.
        </p>
      )
    default:
      return (
        <p>
          {badge} This server does not follow it now: this copy changes only when an operator{' '}
          {upstream.kind === 'bundle' ? 'imports another bundle' : 'syncs from it again'}.
        </p>
      )
  }
}

/** The block on a mirrored node's or publisher's page. */
export function OriginSection({ origin, now, what }: { origin: Provenance; now: Date; what: 'node' | 'publisher' }) {
  const { upstream } = origin
  return (
    <section class="origin panel" aria-labelledby="origin-heading">
      <h2 id="origin-heading">Mirrored {what}</h2>
      <p>
        This {what} is a copy from <Source upstream={upstream} />. <LastSync upstream={upstream} now={now} />
      </p>
      <Following upstream={upstream} now={now} />
    </section>
  )
}

/** The line in a node's card: where from, when, and the state when it is not fine. */
export function OriginLine({ origin, now }: { origin: Provenance; now: Date }) {
  const { upstream } = origin
  const followed = upstream.followed
  return (
    <li class="origin">
      Mirrored from <span>{shortName(upstream)}</span>
      {upstream.lastSuccessAt && (
        <>
          , {upstream.kind === 'bundle' ? 'imported' : 'synced'} <Ago iso={upstream.lastSuccessAt} now={now} />
        </>
      )}
      {followed && followed !== 'ok' && (
        <>
          {' '}
          <span class={`badge ${STATES[followed].tone}`}>{STATES[followed].badge}</span>
        </>
      )}
    </li>
  )
}

/** The registry's own state while `serve --sync-from` runs, for the footer of every page. */
export function MirrorFooter({ status, now }: { status: MirrorStatus | undefined; now: Date }) {
  if (!status) return null
  const state = STATES[status.state]
  return (
    <p class="mirror-status">
      Mirror of <ExternalLink href={withoutUrlSecrets(status.upstream)} />:{' '}
      {status.lastSuccessAt ? (
        <>
          synced <Ago iso={status.lastSuccessAt} now={now} />
        </>
      ) : (
        'no sync has completed yet'
      )}{' '}
      <span class={`badge ${state.tone}`}>{state.badge}</span>
    </p>
  )
}
