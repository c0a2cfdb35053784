import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { ERROR_CODES } from '../../src/errors'
import { openApiPath } from '../../src/http/openapi'
import { isPagePath } from '../../src/web/links'
import { makeTestApp, type TestApp } from '../support/app'

let t: TestApp
beforeEach(async () => (t = await makeTestApp()))
afterEach(() => t.cleanup())

describe('GET /openapi', () => {
  test('lists every route the app serves, with the method it answers', async () => {
    const doc = (await t.call('GET', '/openapi')).body
    // Middleware registrations (use) show as ALL; every real route must be documented. The web pages (`/` and
    // `/-/...`) answer HTML to people and are not part of the JSON API.
    const routes = t.app.routes.filter((r) => r.method !== 'ALL' && !isPagePath(r.path))
    expect(routes.length).toBeGreaterThan(25)
    const missing = routes.filter((r) => !doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()])
    expect(missing.map((r) => `${r.method} ${r.path}`)).toEqual([])
  })

  test('leaves out exactly the web pages, which sit where no API route can', async () => {
    const doc = (await t.call('GET', '/openapi')).body
    const pages = t.app.routes.filter((r) => r.method === 'GET' && isPagePath(r.path)).map((r) => r.path)
    expect(pages).toContain('/')
    expect(pages).toContain('/-/nodes/:nodeId')
    expect(Object.keys(doc.paths).filter(isPagePath)).toEqual([])
    expect(['/nodes', '/-nodes', '/publishers/-', '/openapi'].filter(isPagePath)).toEqual([])
  })

  test('documents the error codes as a closed list, and bodies from the same schemas the routes validate with', async () => {
    const doc = (await t.call('GET', '/openapi')).body
    expect(doc.components.schemas.ErrorResponse.properties.error.enum).toEqual([...ERROR_CODES])
    const publish = doc.paths['/publishers/{publisherId}/nodes/{nodeId}/versions'].post
    expect(publish.responses['201'].content['application/json'].schema.properties.node_version).toEqual({
      $ref: '#/components/schemas/NodeVersion',
    })
    expect(publish.requestBody.content['application/json'].schema.properties.node.properties.description.maxLength).toBe(1000)
    expect(doc.paths['/nodes/{nodeId}/reviews'].post.parameters).toContainEqual({
      name: 'star',
      in: 'query',
      required: true,
      schema: { type: 'integer', minimum: 1, maximum: 5 },
    })
    expect(doc.paths['/nodes'].get.parameters).toContainEqual({
      name: 'node_id',
      in: 'query',
      required: false,
      schema: { type: 'array', items: { type: 'string' } },
      style: 'form',
      explode: true,
    })
    expect(doc.components.schemas.NodeVersion.properties.supported_comfyui_version).toEqual({ type: 'string' })
    expect(JSON.stringify(doc)).not.toContain('$defs')
  })

  test('the video proxy documents its own error body and both ways to send a token', async () => {
    const doc = (await t.call('GET', '/openapi')).body
    const proxyError = { $ref: '#/components/schemas/ProxyError' }
    for (const [path, method] of [
      ['/proxy/provider/start-end2video', 'post'],
      ['/proxy/vidu/start-end2video', 'post'],
      ['/proxy/vidu/tasks/{taskId}/creations', 'get'],
      ['/proxy/provider/callback', 'post'],
      ['/customers/storage', 'post'],
      ['/customers/storage/{id}', 'put'],
    ] as const) {
      expect(doc.paths[path][method].responses.default.content['application/json'].schema).toEqual(proxyError)
    }
    expect(doc.paths['/nodes/{nodeId}'].get.responses.default.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorResponse',
    })
    expect(doc.paths['/proxy/vidu/start-end2video'].post.security).toEqual([{ BearerAuth: [] }, { ApiKeyAuth: [] }])
    expect(doc.components.securitySchemes.ApiKeyAuth).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-KEY' })
    expect(doc.paths['/proxy/vidu/start-end2video'].post.requestBody.content['application/json'].schema.required).toEqual([
      'model',
      'images',
    ])
  })
})
