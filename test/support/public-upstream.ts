/**
 * A stand-in for the public registry on 127.0.0.1, in its exact reply shapes (its spellings, omitted empty
 * fields, microsecond timestamps, 404 for /changes), built from the real packs of test/fixtures, with archives
 * served from a storage path like its bucket. It misbehaves on demand: status codes, 429 with Retry-After,
 * bodies cut short, stalls, connection resets, changed archive bytes, deleted nodes, malformed items.
 */
import { makeZip } from './archives'
import { REAL_NODES } from './seed'

export interface FakeVersion {
  id: string
  version: string
  status: 'active' | 'pending' | 'flagged' | 'banned' | 'deleted'
  createdAt: string
  changelog: string
  archive: Uint8Array<ArrayBuffer> | null
  hostNodes: string[]
}

export interface FakeNode {
  id: string
  name: string
  description: string
  author: string
  repository: string
  stars: number
  publisher: string
  status: 'active' | 'banned'
  createdAt: string
  updatedAt: string
  versions: FakeVersion[]
  /** Sent as is instead of the node's JSON (to test malformed items). */
  raw?: unknown
}

export type Fault =
  | { kind: 'status'; status: number }
  | { kind: 'retry-after'; seconds: number }
  | { kind: 'truncate' }
  | { kind: 'stall' }
  | { kind: 'reset' }

const micro = (iso: string) => iso.replace(/\.(\d{3})Z$/, '.$1482Z') // the upstream's microseconds

function packZip(node: string, version: string, hostNodes: string[]) {
  const mappings = hostNodes.map((n) => `    "${n}": Node,`).join('\n')
  return makeZip([
    { name: '__init__.py', data: `class Node: pass\nNODE_CLASS_MAPPINGS = {\n${mappings}\n}\n` },
    { name: 'README.md', data: `${node} ${version}\n` },
  ])
}

export function fakeNodes(count: number, versionsEach = 2): FakeNode[] {
  return REAL_NODES.slice(0, count).map((n, i) => {
    const created = new Date(Date.UTC(2025, 0, 1 + i)).toISOString()
    const hostNodes = n.host_nodes.slice(0, 5)
    return {
      id: n.id,
      name: n.name,
      description: n.description,
      author: n.author,
      repository: n.repository,
      stars: n.repohost_stars,
      publisher: n.publisher
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')
        .replace(/^[^a-z]+/, 'p'),
      status: 'active',
      createdAt: created,
      updatedAt: created,
      versions: Array.from({ length: versionsEach }, (_, k) => ({
        id: crypto.randomUUID(),
        version: `1.${k}.0`,
        status: 'active' as const,
        createdAt: new Date(Date.UTC(2025, 0, 1 + i, k)).toISOString(),
        changelog: k ? `release ${k}` : '',
        archive: packZip(n.id, `1.${k}.0`, hostNodes),
        hostNodes,
      })),
    }
  })
}

export interface PublicUpstream {
  url: string
  nodes: FakeNode[]
  /** Paths (with query) of every request, in order. */
  requests: string[]
  /** Faults to play, in order, on the next requests whose path matches. */
  fault(match: RegExp, fault: Fault, times?: number): void
  /** Called on each request before it is answered (a test may kill a process here). */
  onRequest?: (path: string) => void
  stop(): void
}

const STATUS = { active: 'NodeStatusActive', banned: 'NodeStatusBanned' }
const VSTATUS = (s: FakeVersion['status']) => `NodeVersionStatus${s[0]!.toUpperCase()}${s.slice(1)}`

export function startPublicUpstream(nodes: FakeNode[], opts: { pageLimit?: number } = {}): PublicUpstream {
  const faults: { match: RegExp; fault: Fault; times: number }[] = []
  const requests: string[] = []
  const maxLimit = opts.pageLimit ?? 50
  let url = ''
  const publisherJson = (id: string) => ({
    id,
    name: id,
    description: '',
    website: '',
    support: '',
    source_code_repo: '',
    logo: '',
    createdAt: '2024-12-01T00:00:00.000001Z',
    status: 'PublisherStatusActive',
    members: [],
  })
  const versionJson = (n: FakeNode, v: FakeVersion, withReason: boolean) => ({
    id: v.id,
    version: v.version,
    changelog: v.changelog,
    deprecated: false,
    dependencies: ['numpy'],
    createdAt: micro(v.createdAt),
    status: VSTATUS(v.status),
    status_reason: withReason ? '' : null,
    downloadUrl: v.archive ? `${storage.url}/${n.publisher}/${n.id}/${v.version}/node.zip` : '',
    node_id: n.id,
    comfy_node_extract_status: 'success',
    supported_comfyui_version: '>=0.3.0',
    supported_os: ['OS Independent'],
    tags: [],
  })
  const nodeJson = (n: FakeNode) => {
    if (n.raw !== undefined) return n.raw
    const latest = [...n.versions].sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0]
    return {
      id: n.id,
      name: n.name,
      description: n.description,
      author: n.author,
      license: '{"file": "LICENSE"}',
      icon: '',
      repository: n.repository,
      category: '',
      tags: [],
      downloads: 10 * n.stars,
      rating: 4.5,
      status: STATUS[n.status],
      status_detail: '',
      latest_version: latest && { ...versionJson(n, latest, false), downloadUrl: '' },
      publisher: publisherJson(n.publisher),
      created_at: micro(n.createdAt),
      github_stars: n.stars,
      preempted_comfy_node_names: [],
      search_ranking: 0,
      supported_comfyui_version: '>=0.3.0',
      supported_os: null,
      // supported_accelerators, translations, banner_url: omitted when empty, as the upstream does
    }
  }
  const json = (body: unknown, status = 200) => Response.json(body, { status })

  function answer(path: string, query: URLSearchParams, req: Request): Response {
    if (path === '/nodes') {
      const limit = Math.min(Math.max(Number(query.get('limit') ?? 10), 1), maxLimit)
      const page = Math.max(Number(query.get('page') ?? 1), 1)
      const since = query.get('timestamp')
      const list = nodes.filter(
        (n) =>
          (!since || n.updatedAt > new Date(since).toISOString()) && (query.get('include_banned') !== 'false' || n.status !== 'banned'),
      )
      return json({
        total: list.length,
        nodes: list.slice((page - 1) * limit, page * limit).map(nodeJson),
        page,
        limit,
        totalPages: Math.ceil(list.length / limit),
      })
    }
    let m = /^\/nodes\/([^/]+)$/.exec(path)
    const find = (id: string) => nodes.find((n) => n.id === decodeURIComponent(id))
    if (m) {
      const n = find(m[1]!)
      if (!n) return json({ error: '', message: 'Node not found' }, 404)
      return n.status === 'banned' ? json({ message: 'Node Banned' }, 403) : json(nodeJson(n))
    }
    if ((m = /^\/nodes\/([^/]+)\/versions$/.exec(path))) {
      const n = find(m[1]!)
      if (!n) return json({ message: 'Node not found' }, 404)
      const statuses = query.getAll('statuses')
      const list = n.versions.filter((v) => !statuses.length || statuses.includes(VSTATUS(v.status)))
      const reason = query.get('include_status_reason') === 'true'
      return json(list.sort((a, b) => b.version.localeCompare(a.version)).map((v) => versionJson(n, v, reason)))
    }
    if ((m = /^\/nodes\/([^/]+)\/versions\/([^/]+)\/comfy-nodes$/.exec(path))) {
      const v = find(m[1]!)?.versions.find((x) => x.version === decodeURIComponent(m![2]!))
      if (!v) return json({ message: 'Not found' }, 404)
      const comfy = v.hostNodes.map((name) => ({
        comfy_node_name: name,
        category: 'image',
        description: '',
        input_types: '{}',
        deprecated: false,
        experimental: false,
      }))
      return json({ comfy_nodes: comfy, totalNumberOfPages: 1 })
    }
    return json({ message: 'Not Found' }, 404)
  }

  function misbehave(fault: Fault, ok: Response): Response | Promise<Response> {
    if (fault.kind === 'status') return Response.json({ message: 'Internal Server Error' }, { status: fault.status })
    if (fault.kind === 'retry-after') return new Response('slow down', { status: 429, headers: { 'retry-after': String(fault.seconds) } })
    return ok.arrayBuffer().then((buf) => {
      const half = new Uint8Array(buf).subarray(0, Math.max(1, buf.byteLength >> 1))
      // A JSON reply cut short ends early; a stall sends half, then nothing more.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(half)
          if (fault.kind !== 'stall') controller.close()
        },
      })
      return new Response(body, { status: ok.status, headers: { 'content-type': 'application/json' } })
    })
  }

  const storage = startStorage(
    (path) => {
      const m = /^\/[^/]+\/([^/]+)\/([^/]+)\/node\.zip$/.exec(path)
      return m
        ? nodes.find((n) => n.id === decodeURIComponent(m[1]!))?.versions.find((x) => x.version === decodeURIComponent(m[2]!))?.archive
        : undefined
    },
    (path) => {
      requests.push(`/storage${path}`)
      upstream.onRequest?.(`/storage${path}`)
      const i = faults.findIndex((f) => f.match.test(`/storage${path}`))
      if (i < 0) return undefined
      const f = faults[i]!
      if (--f.times <= 0) faults.splice(i, 1)
      return f.fault
    },
  )
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 5,
    fetch(req) {
      const u = new URL(req.url)
      const path = u.pathname + u.search
      requests.push(path)
      upstream.onRequest?.(path)
      const ok = answer(u.pathname, u.searchParams, req)
      const i = faults.findIndex((f) => f.match.test(path))
      if (i < 0) return ok
      const f = faults[i]!
      if (--f.times <= 0) faults.splice(i, 1)
      return misbehave(f.fault, ok)
    },
  })
  url = `http://127.0.0.1:${server.port}`
  const upstream: PublicUpstream = {
    url,
    nodes,
    requests,
    fault: (match, fault, times = 1) => void faults.push({ match, fault, times }),
    stop: () => {
      server.stop(true)
      storage.stop()
    },
  }
  return upstream
}

/**
 * The bucket archives are served from: a bare HTTP/1.1 responder on a TCP socket, so that it can do what a
 * well-behaved server library will not: declare a Content-Length and close early, reset, or stall mid-body.
 */
function startStorage(find: (path: string) => Uint8Array | null | undefined, faultFor: (path: string) => Fault | undefined) {
  const head = (status: string, headers: Record<string, string>) =>
    `HTTP/1.1 ${status}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}connection: close\r\n\r\n`
  const listener = Bun.listen<{ buf: string }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buf: '' }
      },
      data(socket, chunk) {
        socket.data.buf += chunk.toString('latin1')
        const end = socket.data.buf.indexOf('\r\n\r\n')
        if (end < 0) return
        const [line, ...rest] = socket.data.buf.slice(0, end).split('\r\n')
        const path = line!.split(' ')[1]!
        const ifNoneMatch = rest
          .find((h) => h.toLowerCase().startsWith('if-none-match:'))
          ?.split(':')[1]
          ?.trim()
        const bytes = find(path)
        const fault = faultFor(path)
        if (!bytes) return void (socket.write(head('404 Not Found', { 'content-length': '9' }) + 'NoSuchKey'), socket.end())
        const etag = `"${Bun.hash(bytes).toString(16)}"`
        if (fault?.kind === 'reset') return void socket.terminate()
        if (fault?.kind === 'status')
          return void (socket.write(head(`${fault.status} Unavailable`, { 'content-length': '0' })), socket.end())
        if (fault?.kind === 'retry-after')
          return void (
            socket.write(head('429 Too Many Requests', { 'retry-after': String(fault.seconds), 'content-length': '0' })),
            socket.end()
          )
        if (ifNoneMatch === etag && !fault) return void (socket.write(head('304 Not Modified', { etag })), socket.end())
        socket.write(head('200 OK', { 'content-type': 'application/zip', 'content-length': String(bytes.length), etag }))
        if (!fault) return void (socket.write(bytes), socket.end())
        socket.write(bytes.subarray(0, bytes.length >> 1))
        if (fault.kind === 'truncate') socket.end() // fewer bytes than declared, then closed
        // a stall keeps the socket open, silent
      },
    },
  })
  return { url: `http://127.0.0.1:${listener.port}`, stop: () => listener.stop(true) }
}
