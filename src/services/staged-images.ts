/**
 * Image staging, which the host application's video node calls before a task: a signed PUT for one image on this
 * server (image types only, size capped, single use from the first byte) and an expiring signed download URL on
 * the public URL for the provider to fetch. Staged images are swept a day after staging.
 */
import { mediaType, readSignedQuery } from '../blobs/signing'
import { isImageType, sniffImage, SNIFF_BYTES, type ImageType } from '../domain/images'
import { newId } from '../domain/ids'
import type { StagedImageUrls } from '../domain/wire'
import { AppError, conflict, forbidden, notFound, payloadTooLarge, tooManyRequests, unsupportedMediaType } from '../errors'
import type { StagedImageRow } from '../store/schema'
import {
  claimStagedImage,
  deleteStagedImagesBefore,
  findStagedImage,
  insertStagedImage,
  markStagedImageReady,
  releaseStagedImage,
} from '../store/video'
import { underBlobIntent } from './blob-intent'
import { deleteUnreferenced } from './blob-sweep'
import { commitWrite } from './changes'
import type { Deps } from './deps'
import type { VideoCaller } from './video-caller'
import { inWriteTurn } from './write-turn'

export const STAGING_PREFIX = '/customers/storage'
/** How long a download URL works, and when the image is swept: the provider fetches it when the task starts. */
export const STAGED_IMAGE_TTL_MS = 24 * 60 * 60_000

const stagedPath = (id: string) => `${STAGING_PREFIX}/${id}`
const ONLY_IMAGES = 'only PNG, JPEG and WebP images can be staged'

export async function stageImage(
  deps: Deps,
  caller: VideoCaller,
  input: { file_name: string; content_type?: ImageType },
): Promise<StagedImageUrls> {
  const now = deps.now()
  const waitMs = await deps.video.stageLimiter(caller.key, now.getTime())
  if (waitMs > 0) throw tooManyRequests('Too many images staged; try again later', waitMs / 1000)
  const id = newId()
  await commitWrite(deps, (w) =>
    insertStagedImage(w.db, {
      id,
      caller: caller.key,
      file_name: input.file_name,
      content_type: input.content_type ?? null,
      created_at: w.now,
    }),
  )
  const path = stagedPath(id)
  const url = (method: string, expiresMs: number) =>
    `${deps.settings.publicUrl}${path}?${deps.signer.sign({ method, path, contentType: '', expires: Math.floor(expiresMs / 1000) })}`
  return {
    upload_url: url('PUT', now.getTime() + deps.settings.uploadUrlTtlSeconds * 1000),
    download_url: url('GET', now.getTime() + STAGED_IMAGE_TTL_MS),
  }
}

interface SignedRequest {
  id: string
  /** The request path exactly as received, which the signature covers. */
  path: string
  /** The request's query string, which must hold the signed `expires` and `signature` and nothing else. */
  query: string
}

/** The staged image this signed URL names; 403 for a bad or expired signature, 404 once it was swept. */
async function verifiedImage(deps: Deps, method: 'PUT' | 'GET', req: SignedRequest): Promise<StagedImageRow> {
  const query = readSignedQuery(req.query)
  const expires = query.expires
  if (
    !query.signature ||
    query.altered ||
    expires === undefined ||
    !deps.signer.verify({ method, path: req.path, contentType: '', expires }, query.signature)
  ) {
    throw forbidden('the signature does not match this URL', 'invalid_signature')
  }
  if (expires * 1000 < deps.now().getTime()) throw forbidden('this signed URL has expired', 'signature_expired')
  const row = await findStagedImage(deps.db, req.id)
  if (!row) throw notFound('image not found')
  return row
}

export interface ImageUpload extends SignedRequest {
  contentType: string | undefined
  contentLength: string | undefined
  body: ReadableStream<Uint8Array> | null
}

/** A stream that passes `body` through and keeps its first `n` bytes, to tell the image type once it was read. */
function keepHead(body: ReadableStream<Uint8Array>, n: number) {
  let head = new Uint8Array(0)
  const stream = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (head.length < n) head = Buffer.concat([head, chunk.subarray(0, n - head.length)])
        controller.enqueue(chunk)
      },
    }),
  )
  return { stream, head: () => head }
}

export async function receiveImage(deps: Deps, req: ImageUpload): Promise<void> {
  const row = await verifiedImage(deps, 'PUT', req)
  const max = deps.settings.video.maxImageBytes
  const sent = mediaType(req.contentType)
  if (sent && !isImageType(sent)) throw unsupportedMediaType(ONLY_IMAGES)
  const expected = row.content_type ?? (sent || undefined)
  if (sent && expected !== sent) throw unsupportedMediaType(`this upload URL is for ${expected}`)
  if (req.contentLength !== undefined && Number(req.contentLength) > max)
    throw payloadTooLarge(`the image is larger than the limit of ${max} bytes`)
  // In a write turn, as commitWrite's writes (services/write-turn.ts).
  if (!(await inWriteTurn(deps.db, () => claimStagedImage(deps.db, row.id))))
    throw conflict('this image was already uploaded, or is being uploaded', 'upload_in_progress')
  try {
    const body = keepHead(req.body ?? new Blob([]).stream(), SNIFF_BYTES)
    const staged = await deps.blobs.stage(body.stream, max).catch((err: unknown) => {
      throw err instanceof AppError && err.status === 413 ? payloadTooLarge(`the image is larger than the limit of ${max} bytes`) : err
    })
    const type = sniffImage(body.head())
    if (!type || (expected && type !== expected)) {
      await staged.discard()
      throw unsupportedMediaType(type ? `the bytes are a ${type} image, not ${expected}` : ONLY_IMAGES)
    }
    try {
      // Held from before the commit to the row: a sweep could otherwise delete identical bytes the commit found stored.
      await underBlobIntent(deps, [staged.sha256], async (intent) => {
        await staged.commit()
        await intent.write((w) => markStagedImageReady(w.db, row.id, { sha256: staged.sha256, size: staged.size, mediaType: type }, w.now))
      })
    } catch (err) {
      await staged.discard() // a no-op once committed
      throw err
    }
    deps.log.info('image.staged', { image: row.id, bytes: staged.size, type })
  } catch (err) {
    await inWriteTurn(deps.db, () => releaseStagedImage(deps.db, row.id))
    throw err
  }
}

/** The bytes of an uploaded image, for whoever holds its download URL (the provider). */
export async function openStagedImage(deps: Deps, req: SignedRequest): Promise<{ bytes: Blob; mediaType: string; sha256: string }> {
  const row = await verifiedImage(deps, 'GET', req)
  const bytes = row.state === 'ready' && row.sha256 ? await deps.blobs.open(row.sha256) : undefined
  if (!bytes || !row.sha256 || !row.media_type) throw notFound('the image was not uploaded')
  return { bytes, mediaType: row.media_type, sha256: row.sha256 }
}

/** Removes images staged more than a day ago, and their bytes unless something else holds the same bytes. */
export async function sweepStagedImages(deps: Deps): Promise<number> {
  const before = new Date(deps.now().getTime() - STAGED_IMAGE_TTL_MS).toISOString()
  const { count, blobs } = await commitWrite(deps, (w) => deleteStagedImagesBefore(w.db, before))
  // Decided and deleted under the sweep lock: an upload of the same bytes may be between its commit and its row.
  await deleteUnreferenced(deps, blobs)
  return count
}
