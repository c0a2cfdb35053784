/** The publishing CLI's routes: create a version (signed upload URL back) and edit a version. */
import { Hono } from 'hono'
import * as v from 'valibot'
import type { Deps } from '../services/deps'
import { updateNodeVersion } from '../services/nodes'
import { publishVersion } from '../services/publish'
import type { Env } from './identity'
import { defined, str, strList } from './fields'
import { NodeBody, nodeFields, platformFields } from './node-body'
import { route } from './route-spec'
import { VersionSchema } from '../domain/wire'

const VersionBody = v.object(
  {
    version: v.pipe(v.string('is required (a semantic version)'), v.maxLength(100, 'must be at most 100 characters')),
    changelog: str(20_000),
    dependencies: strList(1000, 1000),
    ...platformFields,
    tags: strList(50, 100),
  },
  'is required',
)

const publish = route({
  summary: 'Create a version (and the node on first publish); PUT the archive to the returned signedUrl',
  tag: 'publishing',
  auth: 'optional',
  description: 'The credential is a personal_access_token of the publisher in the body, or a bearer token of an owner or member.',
  body: v.object({
    personal_access_token: v.nullish(v.string('must be a string')),
    node: v.nullish(NodeBody),
    node_version: VersionBody,
  }),
  status: 201,
  response: v.object({ node_version: VersionSchema, signedUrl: v.string() }),
})

const updateVersion = route({
  summary: 'Update the changelog or deprecation of a version (owners and members)',
  tag: 'publishing',
  auth: 'bearer',
  body: v.object({ changelog: str(20_000), deprecated: v.nullish(v.boolean('must be true or false')) }),
  response: VersionSchema,
})

export function publishRoutes(deps: Deps) {
  const app = new Hono<Env>()

  app.post('/:publisherId/nodes/:nodeId/versions', publish, async (c) => {
    const body = await publish.body(c)
    const { supported_comfyui_version, supported_comfyui_frontend_version, ...version } = body.node_version
    const result = await publishVersion(deps, c.var.actor, {
      publisherId: c.req.param('publisherId'),
      nodeId: c.req.param('nodeId'),
      personalAccessToken: body.personal_access_token ?? undefined,
      node: body.node ? nodeFields(body.node) : undefined,
      version: {
        ...defined(version),
        version: version.version,
        supported_hostui_version: version.supported_hostui_version ?? supported_comfyui_version ?? undefined,
        supported_hostui_frontend_version: version.supported_hostui_frontend_version ?? supported_comfyui_frontend_version ?? undefined,
      },
    })
    return c.json(result, 201)
  })

  app.put('/:publisherId/nodes/:nodeId/versions/:versionId', updateVersion, async (c) => {
    const body = defined(await updateVersion.body(c))
    const { publisherId, nodeId, versionId } = c.req.param()
    return c.json(await updateNodeVersion(deps, c.var.actor, { publisherId, nodeId, versionId }, body))
  })

  return app
}
