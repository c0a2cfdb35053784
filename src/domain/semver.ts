/** Semantic versions: lenient parsing (a leading v, missing minor/patch) to one normal form, and ordering. */

export interface Semver {
  major: number
  minor: number
  patch: number
  prerelease: string[]
  build: string
}

/** What counts as a version: a leading v and missing minor/patch parts are accepted. */
export const SEMVER_PATTERN =
  /^v?(0|[1-9]\d*|\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/

/** Parsed versions by text: a mirror compares and normalizes the same few version texts tens of thousands of times. */
const known = new Map<string, Semver | undefined>()
const KNOWN_AT_MOST = 10_000

/** The parsed version, shared between callers (none changes it). */
function parseSemver(text: string): Semver | undefined {
  if (known.has(text)) return known.get(text)
  const result = parseText(text)
  if (known.size >= KNOWN_AT_MOST) known.clear()
  known.set(text, result)
  return result
}

function parseText(text: string): Semver | undefined {
  const m = SEMVER_PATTERN.exec(text.trim())
  if (!m) return undefined
  const nums = [m[1], m[2], m[3]].map((part) => (part === undefined ? 0 : Number(part)))
  if (nums.some((n) => !Number.isSafeInteger(n))) return undefined
  return {
    major: nums[0] ?? 0,
    minor: nums[1] ?? 0,
    patch: nums[2] ?? 0,
    prerelease: m[4] ? m[4].split('.') : [],
    build: m[5] ?? '',
  }
}

function formatSemver(v: Semver): string {
  const core = `${v.major}.${v.minor}.${v.patch}`
  const pre = v.prerelease.length ? `-${v.prerelease.join('.')}` : ''
  return core + pre + (v.build ? `+${v.build}` : '')
}

/** `v1.2` -> `1.2.0`; undefined when the text is not a semantic version. */
export function normalizeSemver(text: string): string | undefined {
  const parsed = parseSemver(text)
  return parsed && formatSemver(parsed)
}

function compareIdentifiers(a: string, b: string): number {
  const an = /^\d+$/.test(a)
  const bn = /^\d+$/.test(b)
  if (an && bn) return Number(a) - Number(b)
  if (an) return -1
  if (bn) return 1
  return a < b ? -1 : a > b ? 1 : 0
}

/** Semver precedence; text that is not a version sorts below every version. */
export function compareVersions(a: string, b: string): number {
  const va = parseSemver(a)
  const vb = parseSemver(b)
  if (!va || !vb) return va ? 1 : vb ? -1 : a.localeCompare(b)
  const core = va.major - vb.major || va.minor - vb.minor || va.patch - vb.patch
  if (core) return Math.sign(core)
  // A release ranks above its prereleases.
  if (!va.prerelease.length || !vb.prerelease.length) {
    return Math.sign(vb.prerelease.length - va.prerelease.length) || 0
  }
  for (let i = 0; i < Math.max(va.prerelease.length, vb.prerelease.length); i++) {
    const x = va.prerelease[i]
    const y = vb.prerelease[i]
    if (x === undefined) return -1
    if (y === undefined) return 1
    const c = compareIdentifiers(x, y)
    if (c) return Math.sign(c)
  }
  return 0
}
