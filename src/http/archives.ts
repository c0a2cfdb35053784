/** /archives/{publisher}/{node}/{version}/node.zip: the signed upload (PUT) and downloads with ETag and ranges. */
import { Hono } from 'hono'
import { openArchive } from '../services/archives'
import type { Deps } from '../services/deps'
import { receiveArchive } from '../services/upload'
import type { Env } from './context'
import { errorBody } from './errors'

const ARCHIVE_ROUTE = '/:publisherId/:nodeId/:version/node.zip'

/** Parses a single `bytes=` range against `size`; undefined = whole file, null = unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined | null {
  if (!header) return undefined
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m || (!m[1] && !m[2])) return undefined
  if (!m[1]) {
    const suffix = Number(m[2])
    return suffix === 0 || size === 0 ? null : { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1
  return start > end || start >= size ? null : { start, end }
}

export function archiveRoutes(deps: Deps) {
  const app = new Hono<Env>()

  app.get(ARCHIVE_ROUTE, async (c) => {
    const archive = await openArchive(deps, c.req.param('nodeId'), c.req.param('version'))
    const etag = `"${archive.sha256}"`
    const headers: Record<string, string> = {
      ETag: etag,
      'Accept-Ranges': 'bytes',
      'Content-Type': archive.format === 'zip' ? 'application/zip' : 'application/gzip',
      'Content-Disposition': `attachment; filename="${archive.format === 'zip' ? 'node.zip' : 'node.tar.gz'}"`,
      'Cache-Control': 'public, max-age=31536000, immutable',
    }
    if (
      c.req
        .header('if-none-match')
        ?.split(/\s*,\s*/)
        .includes(etag)
    )
      return c.body(null, 304, headers)
    const file = Bun.file(archive.path)
    const range = parseRange(c.req.header('range'), archive.size_bytes)
    if (range === null) {
      return c.json(errorBody('range_not_satisfiable', 'the requested range is outside the archive'), 416, {
        'Content-Range': `bytes */${archive.size_bytes}`,
      })
    }
    if (!range) return c.body(file.stream(), 200, { ...headers, 'Content-Length': String(archive.size_bytes) })
    return c.body(file.slice(range.start, range.end + 1).stream(), 206, {
      ...headers,
      'Content-Length': String(range.end - range.start + 1),
      'Content-Range': `bytes ${range.start}-${range.end}/${archive.size_bytes}`,
    })
  })

  // Every other method goes to the signature check, which binds the method (PUT) too.
  app.on(['PUT', 'POST', 'PATCH', 'DELETE'], ARCHIVE_ROUTE, async (c) => {
    const version = await receiveArchive(deps, {
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      nodeId: c.req.param('nodeId'),
      version: c.req.param('version'),
      contentType: c.req.header('content-type'),
      contentLength: c.req.header('content-length'),
      expires: c.req.query('expires'),
      signature: c.req.query('signature'),
      body: c.req.raw.body,
    })
    return c.json({ node_version: version }, 200)
  })

  return app
}
