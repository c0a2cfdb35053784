/**
 * Loading a CI fixture: parse and check the whole file, stage and inspect its archives, then write everything
 * in one `commitWrite` (so the change feed, search index and caches see it like any other write), or nothing
 * and every problem, one line each.
 */
import type { Fixture } from '../domain/fixture'
import { normalizeSemver } from '../domain/semver'
import { archivesOfVersions, nodesByNormalizedIds, versionsOfNodes } from '../store/batch'
import { underBlobIntent } from './blob-intent'
import type { Deps } from './deps'
import { applyFixture, type FixtureCounts } from './fixture-apply'
import { prepareArchives } from './fixture-archives'
import { formatProblem, parseFixture, type FixtureProblem } from './fixture-parse'

export interface FixtureSummary extends FixtureCounts {
  users: number
  publishers: number
  nodes: number
  versions: number
  archives: number
}

export type FixtureLoad = { ok: true; summary: FixtureSummary } | { ok: false; problems: string[] }

class FixtureRejected extends Error {
  constructor(readonly problems: FixtureProblem[]) {
    super('fixture rejected')
  }
}

/** SHA-256 of the archive the store already holds for each fixture version (`node/version` by index). */
async function storedArchives(deps: Deps, fixture: Fixture): Promise<Map<string, string>> {
  const nodes = fixture.nodes ?? []
  const normalizedIds = nodes.map((n) => n.id.toLowerCase())
  const found = new Map((await nodesByNormalizedIds(deps.db, normalizedIds)).map((n) => [n.normalized_id, n.id]))
  if (!found.size) return new Map()
  const versions = await versionsOfNodes(deps.db, [...found.values()])
  const versionIds = versions.map((v) => v.id)
  const sha = new Map((await archivesOfVersions(deps.db, versionIds)).map((a) => [a.version_id, a.sha256]))
  const idOf = new Map(versions.map((v) => [`${v.node_id}@${v.version}`, v.id]))
  const out = new Map<string, string>()
  nodes.forEach((n, i) =>
    n.versions?.forEach((ver, j) => {
      const versionId = idOf.get(`${found.get(n.id.toLowerCase())}@${normalizeSemver(ver.version)}`)
      const stored = versionId && sha.get(versionId)
      if (stored) out.set(`${i}/${j}`, stored)
    }),
  )
  return out
}

function totals(fixture: Fixture, counts: FixtureCounts): FixtureSummary {
  const versions = (fixture.nodes ?? []).flatMap((n) => n.versions ?? [])
  return {
    users: fixture.users?.length ?? 0,
    publishers: fixture.publishers?.length ?? 0,
    nodes: fixture.nodes?.length ?? 0,
    versions: versions.length,
    archives: versions.filter((v) => v.archive_base64 !== undefined).length,
    ...counts,
  }
}

/** Loads the fixture `text` (`source` names it in the audit log). Problems are "path: what is wrong", in file order per step. */
export async function loadFixture(deps: Deps, text: string, source = 'fixture'): Promise<FixtureLoad> {
  const parsed = parseFixture(text)
  if (!parsed.fixture) return { ok: false, problems: parsed.problems.map(formatProblem) }
  const fixture = parsed.fixture
  const stored = await storedArchives(deps, fixture)
  const archives = await prepareArchives(deps, fixture, (node, version) => stored.get(`${node}/${version}`))
  try {
    // Held from before the commit of the bytes to the rows: a sweep could otherwise delete identical bytes found stored.
    const counts = await underBlobIntent(deps, archives.hashes, (intent) =>
      intent.write(async (w) => {
        const problems = [...archives.problems]
        const counts = await applyFixture(w, fixture, archives, problems)
        if (problems.length) throw new FixtureRejected(problems)
        // The bytes are durable and visible before the rows that point at them commit.
        await archives.commit()
        if (counts.created || counts.updated) {
          w.audit({ address: 'fixture' }, { action: 'fixture.load', targetKind: 'fixture', targetId: source, after: counts })
        }
        return counts
      }),
    )
    return { ok: true, summary: totals(fixture, counts) }
  } catch (err) {
    await archives.discard()
    if (err instanceof FixtureRejected) return { ok: false, problems: err.problems.map(formatProblem) }
    throw err
  }
}
