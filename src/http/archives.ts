/** /archives/{publisher}/{node}/{version}/node.zip: the signed upload (PUT) and downloads with ETag and ranges. */
import { Hono, type Context } from 'hono'
import { responseBody } from '../blobs/blob-store'
import { AppError } from '../errors'
import { createArchiveLookup } from '../services/archive-lookup'
import type { Deps } from '../services/deps'
import { receiveArchive } from '../services/upload'
import * as v from 'valibot'
import { VersionSchema } from '../domain/wire'
import { identity, type Env } from './identity'
import { route } from './route-spec'

const ARCHIVE_ROUTE = '/:publisherId/:nodeId/:version/node.zip'
/** Life of a presigned download URL: long enough for a client to follow the redirect, short enough not to be shared. */
const PRESIGNED_SECONDS = 300

/**
 * Parses a single `bytes=` range against `size` (RFC 9110 14.2): undefined = the whole file (no range, or one that is
 * invalid or of several parts, which a server may ignore), null = unsatisfiable (it starts past the end).
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined | null {
  if (!header) return undefined
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim())
  if (!m || (!m[1] && !m[2])) return undefined
  if (!m[1]) {
    const suffix = Number(m[2])
    return suffix === 0 || size === 0 ? null : { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(m[1])
  if (m[2] && Number(m[2]) < start) return undefined
  if (start >= size) return null
  return { start, end: m[2] ? Math.min(Number(m[2]), size - 1) : size - 1 }
}

/** If-None-Match (RFC 9110 13.1.2): `*`, or a list holding the tag, weak or strong alike. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false
  const tags = header.split(',').map((tag) => tag.trim().replace(/^W\//, ''))
  return tags.includes('*') || tags.includes(etag)
}

const download = route({
  summary: 'Download an archive (ETag is its SHA-256; Range and If-None-Match supported)',
  tag: 'archives',
  auth: 'optional',
  description: "A flagged version's archive is refused (403) to everyone but its publisher's members and admins.",
  response: { mediaType: 'application/zip' },
})

const upload = route({
  summary: 'Upload the archive of a version through the signed URL its publish returned (single use)',
  tag: 'archives',
  auth: 'signed',
  bodyType: 'application/zip',
  response: v.object({ node_version: VersionSchema }),
})

const otherMethods = route({ summary: 'Refused with 403: a signed URL accepts only PUT', tag: 'archives', auth: 'signed' })

export function archiveRoutes(deps: Deps) {
  const app = new Hono<Env>()

  // Identity only for the flagged-archive exception; a bad token just downloads as anyone would.
  const lookup = createArchiveLookup(deps)
  app.get(ARCHIVE_ROUTE, download, identity(deps), async (c) => {
    const archive = await lookup(c.var.actor, c.req.param('nodeId'), c.req.param('version'))
    const etag = `"${archive.sha256}"`
    const size = archive.bytes.size
    const headers: Record<string, string> = {
      ETag: etag,
      'Accept-Ranges': 'bytes',
      'Content-Type': archive.format === 'zip' ? 'application/zip' : 'application/gzip',
      'Content-Disposition': `attachment; filename="${archive.format === 'zip' ? 'node.zip' : 'node.tar.gz'}"`,
      // A flagged version's archive goes to its publisher's members and admins only: no shared cache may keep it (one
      // in front of the registry would hand it to everyone) and no browser beyond the moment (it may be banned next).
      'Cache-Control': archive.forEveryone ? 'public, max-age=31536000, immutable' : 'private, no-store',
    }
    if (noneMatch(c.req.header('if-none-match'), etag)) return new Response(null, { status: 304, headers })
    // A range holds only while the archive is the one If-Range names (its tag, compared strongly); else all of it.
    const ifRange = c.req.header('if-range')
    const range = ifRange === undefined || ifRange.trim() === etag ? parseRange(c.req.header('range'), size) : undefined
    if (range === null) {
      throw new AppError(416, 'range_not_satisfiable', 'the requested range is outside the archive', { 'Content-Range': `bytes */${size}` })
    }
    // A HEAD sends no body (link checkers and monitors send one): it answers as the GET would, uncounted.
    if (c.req.method !== 'HEAD') {
      const { downloads, downloadBytes } = deps.metrics
      downloads.inc({ kind: range ? 'archive_range' : 'archive' })
      downloadBytes.inc(range ? range.end - range.start + 1 : size)
    }
    // The object store serves the bytes itself (ranges and all) when the operator asks for it.
    if (deps.settings.presignedDownloads && deps.blobs.presign) {
      return c.redirect(deps.blobs.presign(archive.sha256, PRESIGNED_SECONDS), 302)
    }
    if (!range) {
      // Bun answers a Range itself when the body is a file (or a file's stream): a range decided against here goes
      // out whole, through a stream Bun cannot trace back to the file.
      const body = c.req.header('range') ? archive.bytes.stream().pipeThrough(new TransformStream()) : responseBody(archive.bytes)
      return new Response(body, { headers: { ...headers, 'Content-Length': String(size) } })
    }
    return new Response(responseBody(archive.bytes.slice(range.start, range.end + 1)), {
      status: 206,
      headers: {
        ...headers,
        'Content-Length': String(range.end - range.start + 1),
        'Content-Range': `bytes ${range.start}-${range.end}/${size}`,
      },
    })
  })

  const receive = async (c: Context<Env>) => {
    const url = new URL(c.req.url)
    const version = await receiveArchive(deps, {
      method: c.req.method,
      path: url.pathname,
      query: url.search,
      nodeId: c.req.param('nodeId') ?? '',
      version: c.req.param('version') ?? '',
      contentType: c.req.header('content-type'),
      contentLength: c.req.header('content-length'),
      body: c.req.raw.body,
    })
    return c.json({ node_version: version }, 200)
  }
  app.put(ARCHIVE_ROUTE, upload, receive)
  // Other methods reach the signature check too, which binds the method and refuses them (403).
  app.on(['POST', 'PATCH', 'DELETE'], ARCHIVE_ROUTE, otherMethods, receive)

  return app
}
