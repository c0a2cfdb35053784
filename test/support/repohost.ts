/**
 * A GitHub-compatible API on 127.0.0.1 for claims: real HTTP, so the client under test is the real one. It knows
 * tokens (token -> login) and repositories (who administers them, through the repository's `permissions` or only
 * through the collaborator permission call), and can misbehave: rate limits, 5xx, garbage, a reply that never
 * comes, redirects; `holdRepos` holds repository replies until that many have arrived (for concurrency tests).
 */
export interface FakeRepo {
  /** Users whose repository reply says `permissions.admin: true`. */
  admins?: string[]
  /** The collaborator permission call's answer per user (`admin`, `maintain`, `write`, `read`). */
  collaborators?: Record<string, string>
  /** Leave `permissions` out of the repository reply (as some Gitea versions do). */
  noPermissions?: boolean
}

export type Misbehaviour = 'rate-limit-429' | 'rate-limit-403' | 'error-502' | 'garbage' | 'hang' | 'redirect-away' | 'redirect-here'

export interface FakeRepoHost {
  /** The API base URL (for --repohost-api-url). */
  url: string
  /** What repository URLs on this host start with: `http://127.0.0.1:PORT`. */
  web: string
  users: Map<string, string>
  repos: Map<string, FakeRepo>
  /** Every request: method, path and the Authorization header as received. */
  requests: { path: string; authorization: string | null }[]
  misbehave?: Misbehaviour
  /** Where `redirect-away` sends requests. */
  elsewhere?: string
  holdRepos?: number
  stop(): Promise<void>
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

export function startRepoHost(): FakeRepoHost {
  const held: (() => void)[] = []
  const host: FakeRepoHost = {
    url: '',
    web: '',
    users: new Map(),
    repos: new Map(),
    requests: [],
    async stop() {
      await server.stop(true)
    },
  }

  async function answer(req: Request): Promise<Response> {
    const url = new URL(req.url)
    host.requests.push({ path: url.pathname, authorization: req.headers.get('authorization') })
    switch (host.misbehave) {
      case 'rate-limit-429':
        return json({ message: 'rate limited' }, 429, { 'retry-after': '42' })
      case 'rate-limit-403':
        return json({ message: 'API rate limit exceeded' }, 403, {
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 120),
        })
      case 'error-502':
        return json({ message: 'bad gateway' }, 502)
      case 'garbage':
        return new Response('<html>captive portal</html>', { headers: { 'content-type': 'text/html' } })
      case 'hang':
        return new Promise(() => {})
      case 'redirect-away':
        return new Response(null, { status: 301, headers: { location: `${host.elsewhere}${url.pathname}` } })
      case 'redirect-here':
        if (!url.pathname.startsWith('/moved/')) return new Response(null, { status: 301, headers: { location: `/moved${url.pathname}` } })
        url.pathname = url.pathname.slice('/moved'.length)
    }
    const token = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1]
    const login = token ? host.users.get(token) : undefined
    if (!login) return json({ message: 'Bad credentials' }, 401)
    if (url.pathname === '/user') return json({ login, id: 1, type: 'User' })
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/collaborators\/([^/]+)\/permission)?$/.exec(url.pathname)
    if (!m) return json({ message: 'Not Found' }, 404)
    const name = `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`.toLowerCase()
    const repo = host.repos.get(name)
    const visible = repo && (repo.admins?.includes(login) || repo.collaborators?.[login] !== undefined)
    if (!repo || !visible) return json({ message: 'Not Found' }, 404)
    if (m[3]) {
      const permission = repo.collaborators?.[decodeURIComponent(m[4]!)]
      return permission
        ? json({ permission, user: { login } })
        : json({ message: 'Must have push access to view collaborator permission.' }, 403)
    }
    if (host.holdRepos) {
      // Hold every repository reply until `holdRepos` of them have arrived.
      await new Promise<void>((resolve) => {
        held.push(resolve)
        if (held.length >= host.holdRepos!) for (const release of held.splice(0)) release()
      })
    }
    const admin = repo.admins?.includes(login) ?? false
    return json({
      full_name: name,
      private: false,
      ...(!repo.noPermissions && { permissions: { admin, maintain: admin, push: admin, pull: true } }),
    })
  }

  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: answer })
  host.url = `http://127.0.0.1:${server.port}`
  host.web = host.url
  return host
}
