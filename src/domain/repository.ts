/** Which repository a node's repository URL names on the source-code host that claims are checked against. */

export interface RepoRef {
  owner: string
  repo: string
}

/**
 * Where repositories live on the host whose API is at `apiUrl`, as `host[:port][/prefix]` in lower case:
 * `https://api.github.com` -> `github.com`, `https://ghe.example.com/api/v3` -> `ghe.example.com`,
 * `https://example.com/gitea/api/v1` -> `example.com/gitea`.
 */
export function repoWebBase(apiUrl: string): string {
  const url = new URL(apiUrl)
  const host = url.host.toLowerCase().replace(/^(?:api|www)\./, '')
  const prefix = url.pathname.replace(/\/+$/, '').replace(/\/api\/v\d+$/i, '')
  return (host + prefix).toLowerCase()
}

/** Owner and repository names as GitHub, Gitea and Forgejo allow them; nothing that could leave its path segment. */
const NAME = /^[A-Za-z0-9_.-]{1,100}$/
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i

/**
 * The owner/repo a repository URL names on the host at `webBase`, or undefined when it names none there.
 * Scheme, user info, `www.`, a trailing slash, `.git`, a query and the case of the host are ignored; SSH
 * forms (`git@github.com:owner/repo.git`) are understood; deeper paths (`/tree/main/sub`) name their repository.
 */
export function parseRepository(url: string, webBase: string): RepoRef | undefined {
  const trimmed = url.trim()
  let rest = trimmed.replace(SCHEME, '').replace(/^[^@/]*@/, '')
  if (!SCHEME.test(trimmed)) rest = rest.replace(/^([^/:]+):(?!\d+(?:\/|$))/, '$1/')
  rest = rest.replace(/[?#].*$/, '').replace(/^www\./i, '')
  const base = webBase.replace(/^www\./, '')
  const lower = rest.toLowerCase()
  if (lower !== base && !lower.startsWith(`${base}/`)) return undefined
  const [owner, name] = rest.slice(base.length).split('/').filter(Boolean)
  const repo = name?.replace(/\.git$/i, '')
  if (!owner || !repo || !NAME.test(owner) || !NAME.test(repo) || /^\.+$/.test(owner) || /^\.+$/.test(repo)) return undefined
  return { owner, repo }
}
