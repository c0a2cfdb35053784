/** `registry-mirror sync`: one sync run from an upstream into a data directory, with a progress bar on a terminal. */
import { parseCommandArgs } from './cli-args'
import { count, plural } from './domain/plural'
import { loadConfig, settingEnv, SYNC_SETTINGS } from './config'
import { openDataDeps } from './data-deps'
import type { Io } from './io'
import { createProgressBar, formatBytes } from './progress'
import { runSync, type SyncSummary } from './services/mirror/sync'
import { createUpstreamHttp } from './upstream/http-client'

/** One entry per option, descriptions in one column past the longest name (the backend options are long ones). */
function optionLines(): string {
  const width = Math.max(...Object.keys(SYNC_SETTINGS).map((n) => n.length + 2))
  return Object.entries(SYNC_SETTINGS)
    .map(([name, s]) => {
      const dflt = s.default === undefined ? '' : ` (default ${s.default})`
      return `  ${`--${name}`.padEnd(width)} ${s.help}${dflt}\n  ${''.padEnd(width)} env ${settingEnv(name, s)}`
    })
    .join('\n')
}

export const SYNC_HELP = `Usage: registry-mirror sync --from URL [--archives[=lazy]] [--full] [--data DIR] [options]

Copies publishers, nodes and versions (and with --archives their archives) from an upstream into the data
directory: another registry-mirror (through its change feed), or the public registry. Incremental after the
first run, resumable when cut off, and a second run right after the first changes nothing.

Options:
${optionLines()}

Exit status: 0 when the run completed; 3 when it completed but skipped or refused some items (listed on
stderr); 1 when it could not complete (the reason is printed); 2 for bad usage.`

const MAX_LISTED = 20

/** `--archives` alone means every archive now; `--full` alone means true. */
function normalize(argv: string[]): string[] {
  return argv.map((a) =>
    a === '--archives' ? '--archives=eager' : a === '--full' ? '--full=true' : a === '--no-archives' ? '--archives=none' : a,
  )
}

export function summaryLine(s: SyncSummary): string {
  const state = s.complete ? `complete (${s.full ? 'full pass' : 'incremental'})` : `incomplete: ${s.reason}`
  const { publishers, nodes, versions, removed } = s.changed
  const changed = `${plural(publishers, 'publisher')}, ${plural(nodes, 'node')}, ${plural(versions, 'version')} changed, ${count(removed)} removed`
  const { fetched, bytes, refused, failed } = s.archives
  const archives = `archives ${count(fetched)} stored (${formatBytes(bytes)} fetched), ${count(refused)} refused, ${count(failed)} failed`
  return `sync from ${s.source}: ${state}; ${changed}; ${archives}; ${plural(s.problems.length, 'problem')}; ${s.seconds.toFixed(1)} s`
}

export async function syncCommand(argv: string[], io: Io): Promise<number> {
  const { values } = parseCommandArgs({
    args: normalize(argv),
    options: Object.fromEntries([
      ...Object.keys(SYNC_SETTINGS).map((n) => [n, { type: 'string' as const }]),
      ['help', { type: 'boolean' as const }],
    ]),
    strict: true,
    allowPositionals: false,
  })
  const { help, ...flags } = values as Record<string, string | boolean | undefined>
  if (help) return (io.out(SYNC_HELP), 0)
  const { config, problems } = loadConfig({ flags: flags as Record<string, string | undefined>, env: io.env }, SYNC_SETTINGS)
  if (!config) {
    for (const p of problems) io.err(p)
    return 2
  }
  if (!config.from) return (io.err('--from: required (the base URL of another registry-mirror, or of the public registry)'), 2)
  const deps = await openDataDeps(config, { logLevel: config['log-level'] })
  const stop = new AbortController()
  void io.stopSignal.then(() => stop.abort())
  const bar = io.isTerminal ? createProgressBar() : undefined
  try {
    const http = createUpstreamHttp({
      concurrency: config.concurrency,
      ratePerSecond: config.rate,
      timeoutMs: config.timeout * 1000,
      attempts: config.retries + 1,
      signal: stop.signal,
      onRetry: (r) => deps.log.info('mirror.retry', { url: r.url, attempt: r.attempt, wait_ms: r.waitMs, reason: r.reason }),
    })
    const summary = await runSync(deps, {
      from: config.from,
      archives: config.archives,
      full: config.full,
      fullEvery: config['full-every'],
      http,
      signal: stop.signal,
      onProgress: bar && ((p) => bar.update(p)),
    })
    bar?.stop()
    for (const p of summary.problems.slice(0, MAX_LISTED)) io.err(`skipped ${p.kind} ${p.id}: ${p.reason}`)
    if (summary.problems.length > MAX_LISTED)
      io.err(`... and ${summary.problems.length - MAX_LISTED} more (--log-level warn lists every one)`)
    io.out(summaryLine(summary))
    return !summary.complete ? 1 : summary.problems.length ? 3 : 0
  } finally {
    bar?.stop()
    await deps.close()
  }
}
