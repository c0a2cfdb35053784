/**
 * The source-code host client of claims (GitHub, GitHub Enterprise, Gitea and Forgejo answer the same calls):
 * proves that a token's user administers a repository. One deadline per check, every reply validated, redirects
 * followed only within the API's origin (the token never travels anywhere else), and the token never logged or
 * echoed: messages name the host, the repository and the host user only.
 */
import * as v from 'valibot'
import { type RepoRef, repoWebBase } from '../domain/repository'
import { jsonNestsWithin, MAX_TEXT_DEPTH } from '../domain/json-bounds'
import { AppError, forbidden, tooManyRequests } from '../errors'

export interface RepoHost {
  /** Where repositories live on this host (`github.com`): the repository URLs a claim can name. */
  readonly webBase: string
  /** The host login of the token's user when that user administers the repository; an AppError otherwise. */
  verifyAdmin(token: string, repo: RepoRef): Promise<{ login: string }>
}

const MAX_REPLY_BYTES = 1024 * 1024
const MAX_REDIRECTS = 3
const MAX_RETRY_AFTER_SECONDS = 3600

const Login = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,100}$/))
const UserReply = v.object({ login: Login })
const RepoReply = v.object({ permissions: v.optional(v.object({ admin: v.optional(v.boolean()) })) })
const PermissionReply = v.object({ permission: v.string() })

interface Reply {
  status: number
  headers: Headers
  /** The parsed JSON of a 2xx reply; undefined otherwise or when it is not JSON. */
  body: unknown
}

/** The JSON of a reply, read up to a bound (a misbehaving host cannot grow our memory). */
async function readJson(res: Response): Promise<unknown> {
  if (!res.body) return undefined
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body) {
    size += chunk.byteLength
    if (size > MAX_REPLY_BYTES) return undefined
    chunks.push(chunk)
  }
  if (!jsonNestsWithin(chunks, MAX_TEXT_DEPTH)) return undefined
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return undefined
  }
}

export function createRepoHost(opts: { apiUrl: string; timeoutMs: number; now?: () => number }): RepoHost {
  const api = new URL(opts.apiUrl.replace(/\/*$/, '/'))
  const webBase = repoWebBase(opts.apiUrl)
  const now = opts.now ?? Date.now
  const failed = (status: 502 | 503, what: string) =>
    new AppError(status, 'upstream_failed', `the repository host ${webBase} ${what}; try again later`)

  async function get(path: string, token: string, signal: AbortSignal): Promise<Reply> {
    let url = new URL(path, api)
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/vnd.github+json, application/json',
          'user-agent': 'registry-mirror',
          'x-github-api-version': '2022-11-28',
        },
        redirect: 'manual',
        signal,
      })
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
      if (location) {
        await res.body?.cancel()
        // A renamed repository redirects within the API; anywhere else would receive the token.
        const next = new URL(location, url)
        if (next.origin !== api.origin || hop >= MAX_REDIRECTS) throw failed(502, 'redirected the check elsewhere')
        url = next
        continue
      }
      const ok = res.status >= 200 && res.status < 300
      if (!ok) await res.body?.cancel()
      return { status: res.status, headers: res.headers, body: ok ? await readJson(res) : undefined }
    }
  }

  function retryAfterSeconds(headers: Headers): number {
    const retryAfter = Number(headers.get('retry-after'))
    if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(retryAfter, MAX_RETRY_AFTER_SECONDS)
    const reset = Number(headers.get('x-ratelimit-reset'))
    if (Number.isFinite(reset) && reset > 0) return Math.min(Math.max(reset - now() / 1000, 1), MAX_RETRY_AFTER_SECONDS)
    return 60
  }

  /** Rate limits (429, or GitHub's 403 with no requests remaining) and host failures, for every call. */
  function checkAnswered(reply: Reply): void {
    if (reply.status === 429 || (reply.status === 403 && reply.headers.get('x-ratelimit-remaining') === '0')) {
      throw tooManyRequests(
        `the repository host ${webBase} is rate limiting this registry; try again later`,
        retryAfterSeconds(reply.headers),
      )
    }
    if (reply.status >= 500) throw failed(503, `answered ${reply.status}`)
  }

  function expect200<S extends v.GenericSchema>(reply: Reply, schema: S): v.InferOutput<S> {
    if (reply.status !== 200) throw failed(502, `answered ${reply.status} unexpectedly`)
    const parsed = v.safeParse(schema, reply.body)
    if (!parsed.success) throw failed(502, 'answered with an unexpected reply')
    return parsed.output
  }

  const badToken = () => forbidden(`REPOHOST_TOKEN was not accepted by ${webBase}`, 'invalid_repohost_token')

  async function check(token: string, { owner, repo }: RepoRef, signal: AbortSignal): Promise<{ login: string }> {
    const user = await get('user', token, signal)
    checkAnswered(user)
    if (user.status === 401 || user.status === 403) throw badToken()
    const { login } = expect200(user, UserReply)

    const name = `${owner}/${repo}`
    const repoPath = `repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`
    const repository = await get(repoPath, token, signal)
    checkAnswered(repository)
    if (repository.status === 401) throw badToken()
    if (repository.status === 403 || repository.status === 404) {
      throw forbidden(`Repository ${name} not found on ${webBase}, or ${webBase} user "${login}" cannot see it`, 'not_repository_admin')
    }
    if (expect200(repository, RepoReply).permissions?.admin === true) return { login }

    // Not shown as admin (Gitea and older servers may leave permissions out): ask for the user's permission.
    const permission = await get(`${repoPath}/collaborators/${encodeURIComponent(login)}/permission`, token, signal)
    checkAnswered(permission)
    if (permission.status === 401) throw badToken()
    const isAdmin = permission.status === 200 && expect200(permission, PermissionReply).permission === 'admin'
    if (!isAdmin && permission.status !== 200 && permission.status !== 403 && permission.status !== 404) {
      throw failed(502, `answered ${permission.status} unexpectedly`)
    }
    if (!isAdmin) {
      throw forbidden(
        `You (${webBase} user "${login}") do not have admin permission on repository ${name}; only repository administrators can claim nodes`,
        'not_repository_admin',
      )
    }
    return { login }
  }

  return {
    webBase,
    async verifyAdmin(token, repo) {
      const signal = AbortSignal.timeout(opts.timeoutMs)
      try {
        return await check(token, repo, signal)
      } catch (err) {
        if (err instanceof AppError) throw err
        if (signal.aborted) {
          const seconds = Math.round(opts.timeoutMs / 100) / 10
          throw new AppError(503, 'upstream_timeout', `the repository host ${webBase} did not answer within ${seconds} s; try again later`)
        }
        throw failed(503, 'could not be reached')
      }
    },
  }
}
