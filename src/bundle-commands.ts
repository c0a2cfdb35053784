/** `registry-mirror export` and `import`: air-gap bundles written to, and read from, one file. */
import { createReadStream, createWriteStream } from 'node:fs'
import { lstat, rename, rm } from 'node:fs/promises'
import { parseCommandArgs, wholeNumber } from './cli-args'
import { BACKEND_SETTINGS, loadConfig, type BackendConfig } from './config'
import { openDataDeps } from './data-deps'
import { existingStoreFile } from './data-dir'
import type { Io } from './io'
import { plural } from './domain/plural'
import { createProgressBar, formatBytes } from './progress'
import { BundleError, exportBundle, importBundle, type ImportSummary } from './services/mirror/bundle'
import { isDatabaseUnavailable } from './store/db'
import { AppError } from './errors'

export const EXPORT_HELP = `Usage: registry-mirror export [--since SERIAL] [--data DIR | --database URL --storage URL] FILE

Writes one file (a tar) with the publishers, nodes and versions of this registry and the archives stored here,
each with its SHA-256: a consistent snapshot, or with --since only the changes after that serial (the one the
last export printed). Runs while a server serves the same data directory.`

export const IMPORT_HELP = `Usage: registry-mirror import [--data DIR | --database URL --storage URL] FILE

Checks every SHA-256 in a bundle made by "registry-mirror export" before anything becomes visible, then applies
it in order. Importing the same bundle again changes nothing; a bundle that starts after what was imported is
refused, saying which --since to export with. SIGTERM or SIGINT stops it: while it checks, nothing is applied;
while it applies, between batches (importing the same bundle again completes it). Exit status: 0 done, 1 refused,
failed or stopped (the reason is printed), 3 done but some items were skipped (listed), 2 bad usage.`

function parse(argv: string[], names: string[]) {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: Object.fromEntries([...names.map((n) => [n, { type: 'string' }]), ['help', { type: 'boolean' }]]) as Record<
      string,
      { type: 'string' | 'boolean' }
    >,
    strict: true,
    allowPositionals: true,
  })
  return { flags: values as Record<string, string | boolean | undefined>, files: positionals }
}

/** Where the registry is (--data, or --database and --storage as serve takes them); undefined after printing problems. */
function backendsOf(flags: Record<string, unknown>, io: Io): BackendConfig | undefined {
  const values = Object.fromEntries(Object.keys(BACKEND_SETTINGS).map((k) => [k, flags[k] as string | undefined]))
  const { config, problems } = loadConfig({ flags: values, env: io.env }, BACKEND_SETTINGS)
  for (const p of problems) io.err(p)
  return config
}

export async function exportCommand(argv: string[], io: Io): Promise<number> {
  const { flags, files } = parse(argv, ['since', ...Object.keys(BACKEND_SETTINGS)])
  if (flags.help) return (io.out(EXPORT_HELP), 0)
  const since = flags.since === undefined ? 0 : wholeNumber(flags.since)
  if (since === undefined) return (io.err(`--since: expected a serial, a whole number (got "${flags.since}")`), 2)
  if (files.length !== 1) return (io.err('expected one FILE to write the bundle to'), 2)
  const file = files[0]!
  // Written beside FILE and renamed onto it: a device or link there (/dev/stdout, a symlink) would be replaced, not written.
  const there = await lstat(file).catch(() => undefined)
  if (there && !there.isFile()) {
    return (io.err(`cannot write ${file}: it is not a regular file (the bundle is written beside it and renamed onto it)`), 1)
  }
  const backends = backendsOf(flags, io)
  if (!backends) return 2
  // What is exported must be there: a mistyped --data is said, not exported as an empty registry.
  if (!backends.database) existingStoreFile(backends.data)
  const deps = await openDataDeps(backends, { logLevel: 'error' })
  const partial = `${file}.partial`
  try {
    // Written aside and renamed when complete: a cut-off export never looks like a bundle.
    const { manifest, missingArchives } = await exportBundle(deps, since, createWriteStream(partial, { mode: 0o600 }))
    await rename(partial, file)
    const changes = manifest.rows.reduce((n, r) => n + r.changes, 0)
    const bytes = manifest.archives.reduce((n, a) => n + a.size, 0)
    if (missingArchives) {
      io.err(
        `${plural(missingArchives, 'version has its archive', 'versions have their archives')} not stored here ` +
          '(fetched on first download, not yet): run "sync --archives" first to carry them',
      )
    }
    io.out(
      `exported serials ${manifest.since}..${manifest.until} of registry ${manifest.instance}: ${plural(changes, 'change')}, ` +
        `${plural(manifest.archives.length, 'archive')} (${formatBytes(bytes)}) to ${file}; next time: export --since ${manifest.until}`,
    )
    return 0
  } catch (err) {
    await rm(partial, { force: true })
    if (err instanceof BundleError) return (io.err(err.message), 1)
    // A backend that went away is not the file: "cannot write FILE" sent operators to a disk that was fine.
    if (isDatabaseUnavailable(err)) {
      return (io.err(`the database went away during the export, nothing was exported: ${(err as Error).message}`), 1)
    }
    if (err instanceof AppError && err.code === 'storage_unavailable') {
      return (io.err('the archive storage went away during the export, nothing was exported'), 1)
    }
    if ((err as { code?: unknown }).code !== undefined) return (io.err(`cannot write ${file}: ${(err as Error).message}`), 1)
    throw err
  } finally {
    await deps.close()
  }
}

/**
 * The line an import ends with. Its archives are told apart: stored (bytes new here), already here (bytes some version
 * here has as its archive: a second import of the same bundle stores none) and refused by the archive check.
 */
export function importLine(summary: ImportSummary): string {
  const m = summary.manifest
  const c = summary.changed
  const { refused } = summary.archives
  const here = summary.archivesAlreadyHere
  const parts = [`${m.archives.length - refused - here} stored`, ...(here ? [`${here} already here`] : [])]
  if (refused) parts.push(`${refused} refused by the archive check`)
  const archives = `${plural(m.archives.length, 'archive')}${m.archives.length ? ` (${parts.join(', ')})` : ''}`
  return (
    `imported serials ${m.since}..${m.until} of registry ${m.instance}: ${plural(c.publishers, 'publisher')}, ${plural(c.nodes, 'node')}, ` +
    `${plural(c.versions, 'version')} changed, ${c.removed} removed; ${archives}; ` +
    `${plural(summary.problems.length, 'problem')}; next bundle: export --since ${m.until}`
  )
}

export async function importCommand(argv: string[], io: Io): Promise<number> {
  const { flags, files } = parse(argv, Object.keys(BACKEND_SETTINGS))
  if (flags.help) return (io.out(IMPORT_HELP), 0)
  if (files.length !== 1) return (io.err('expected one FILE: a bundle made by "registry-mirror export"'), 2)
  const file = files[0]!
  const backends = backendsOf(flags, io)
  if (!backends) return 2
  const deps = await openDataDeps(backends, { logLevel: 'error' })
  const bar = io.isTerminal ? createProgressBar() : undefined
  // SIGTERM and SIGINT stop it as they stop a sync: at once while it checks, between batches while it applies.
  const stop = new AbortController()
  void io.stopSignal.then(() => stop.abort())
  try {
    const summary = await importBundle(deps, () => createReadStream(file), {
      onProgress: bar && ((p) => bar.update(p)),
      signal: stop.signal,
    })
    bar?.stop()
    for (const p of summary.problems.slice(0, 20)) io.err(`skipped ${p.kind} ${p.id}: ${p.reason}`)
    io.out(importLine(summary))
    return summary.problems.length ? 3 : 0
  } catch (err) {
    bar?.stop()
    if (err instanceof BundleError) return (io.err(err.message), err.nothingToDo ? 0 : 1)
    if ((err as { code?: string }).code === 'ENOENT') return (io.err(`cannot read ${file}: no such file`), 1)
    if (err instanceof SyntaxError) return (io.err(`${file} is not a registry-mirror bundle (${err.message})`), 1)
    // Each batch is applied in a transaction of its own and a bundle applies again without harm: a second run finishes.
    const away = isDatabaseUnavailable(err)
      ? 'the database'
      : err instanceof AppError && err.code === 'storage_unavailable' && 'the archive storage'
    if (away) return (io.err(`${away} went away during the import: ${(err as Error).message}; run it again once it is back`), 1)
    throw err
  } finally {
    await deps.close()
  }
}
