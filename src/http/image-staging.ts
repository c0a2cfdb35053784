/**
 * /customers/storage: image staging for the video node. POST hands out a signed upload URL and a signed download
 * URL; the PUT takes one image; the GET serves it to whoever holds the download URL (the video provider).
 */
import { responseBody } from '../blobs/blob-store'
import { Hono, type Context } from 'hono'
import * as v from 'valibot'
import { mediaType } from '../blobs/signing'
import { IMAGE_TYPES } from '../domain/images'
import { StagedImageUrlsSchema } from '../domain/wire'
import type { Deps } from '../services/deps'
import { openStagedImage, receiveImage, stageImage } from '../services/staged-images'
import { videoCaller } from '../services/video-caller'
import { requireProvider } from '../services/video-tasks'
import { JSON_BODY_LIMIT, limitBody } from './body-limit'
import { identity, type Env } from './identity'
import { route } from './route-spec'

const specs = {
  stage: route({
    summary: 'Stage an image for a video task: a signed URL to PUT it to, and the URL the provider will fetch it from',
    tag: 'video',
    auth: 'video',
    errorBody: 'proxy',
    description: 'PNG, JPEG or WebP only. The download URL expires, and the image is removed, a day after staging.',
    body: v.object({
      file_name: v.pipe(
        v.string('must be a string'),
        v.trim(),
        v.nonEmpty('must not be empty'),
        v.maxLength(255, 'must be at most 255 characters'),
      ),
      content_type: v.pipe(
        v.nullish(
          v.pipe(
            v.string('must be a string'),
            v.transform((s: string) => mediaType(s)),
            v.picklist(IMAGE_TYPES, `must be one of ${IMAGE_TYPES.join(', ')}`),
          ),
        ),
        v.transform((x) => x ?? undefined),
      ),
    }),
    response: StagedImageUrlsSchema,
  }),
  upload: route({
    summary: 'Upload the staged image through the signed URL (single use; answers 200)',
    tag: 'video',
    auth: 'signed',
    errorBody: 'proxy',
    bodyType: 'image/png',
  }),
  download: route({
    summary: 'Download a staged image through its signed URL',
    tag: 'video',
    auth: 'signed',
    errorBody: 'proxy',
    response: { mediaType: 'image/png' },
  }),
}

const signedRequest = (c: Context<Env>) => {
  const url = new URL(c.req.url)
  return { id: c.req.param('id') ?? '', path: url.pathname, query: url.search }
}

export function imageStagingRoutes(deps: Deps) {
  const app = new Hono<Env>()
  app.post('/', specs.stage, limitBody(JSON_BODY_LIMIT), identity(deps, { apiKey: true }), async (c) => {
    requireProvider(deps) // staged images are only for the provider
    const who = videoCaller(deps, c.var.actor)
    return c.json(await stageImage(deps, who, await specs.stage.body(c)), 200)
  })
  app.put('/:id', specs.upload, async (c) => {
    await receiveImage(deps, {
      ...signedRequest(c),
      contentType: c.req.header('content-type'),
      contentLength: c.req.header('content-length'),
      body: c.req.raw.body,
    })
    return c.body(null, 200)
  })
  app.get('/:id', specs.download, async (c) => {
    const image = await openStagedImage(deps, signedRequest(c))
    return new Response(responseBody(image.bytes), {
      headers: {
        'Content-Type': image.mediaType,
        'Content-Length': String(image.bytes.size),
        ETag: `"${image.sha256}"`,
        'Cache-Control': 'private, max-age=3600',
        // Served from this origin: never let a browser treat the bytes as anything but the image they are.
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
      },
    })
  })
  return app
}
