/** The OpenAPI 3 document of everything served, generated from the route specs and their valibot schemas. */
import type { Hono } from 'hono'
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig } from '@valibot/to-json-schema'
import * as v from 'valibot'
import { NodePageSchema, NodeSchema, PublisherSchema, UserSchema, VersionSchema } from '../domain/wire'
import { ERROR_CODES } from '../errors'
import { isSpecified, SPEC, type RouteSpec } from './route-spec'

/** Shapes that appear in many operations are named components. */
const DEFINITIONS = { Node: NodeSchema, NodeVersion: VersionSchema, Publisher: PublisherSchema, User: UserSchema, NodePage: NodePageSchema }

const ErrorResponse = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string', enum: [...ERROR_CODES] }, message: { type: 'string' } },
}

/** The video proxy's error body (the upstream's `Error`): a sentence and one line per problem. */
const ProxyError = {
  type: 'object',
  required: ['message', 'details'],
  properties: { message: { type: 'string' }, details: { type: 'array', items: { type: 'string' } } },
}

function config(typeMode: 'input' | 'output'): ConversionConfig {
  return {
    target: 'openapi-3.0',
    typeMode,
    errorMode: 'ignore',
    definitions: DEFINITIONS,
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  }
}

/** The named shapes live once under components; converted schemas only refer to them. */
const jsonSchema = (schema: v.GenericSchema, typeMode: 'input' | 'output') => {
  const { $schema: _s, $defs: _d, ...rest } = toJsonSchema(schema, config(typeMode)) as Record<string, unknown>
  return rest
}

/** Query pipes carry their documented form (v.metadata({ openapi })): their transforms have no JSON Schema. */
function paramDoc(schema: v.GenericSchema): { type?: string } | undefined {
  const inner = 'wrapped' in schema ? (schema.wrapped as v.GenericSchema) : schema
  return (v.getMetadata(inner) as { openapi?: { type?: string } }).openapi
}

function queryParameters(query: v.GenericSchema | undefined) {
  if (!query || !('entries' in query)) return []
  return Object.entries(query.entries as Record<string, v.GenericSchema>).map(([name, schema]) => {
    const documented = paramDoc(schema)
    const required = !('wrapped' in schema)
    const isArray = documented?.type === 'array'
    return {
      name,
      in: 'query',
      required,
      schema: documented ?? jsonSchema(schema, 'input'),
      ...(isArray && { style: 'form', explode: true }),
    }
  })
}

const SECURITY: Record<RouteSpec['auth'], object | undefined> = {
  public: undefined,
  signed: undefined,
  optional: { security: [{}, { BearerAuth: [] }] },
  bearer: { security: [{ BearerAuth: [] }] },
  admin: { security: [{ BearerAuth: [] }] },
  video: { security: [{ BearerAuth: [] }, { ApiKeyAuth: [] }] },
}

function operation(path: string, spec: RouteSpec) {
  const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }))
  const status = String(spec.status ?? 200)
  const response = spec.response
  const content =
    response === undefined
      ? undefined
      : 'mediaType' in response
        ? { [response.mediaType]: { schema: { type: 'string', format: 'binary' } } }
        : { 'application/json': { schema: jsonSchema(response as v.GenericSchema, 'output') } }
  const requestBody = spec.body
    ? { required: true, content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } } }
    : spec.bodyType
      ? { required: true, content: { [spec.bodyType]: { schema: { type: 'string', format: 'binary' } } } }
      : undefined
  return {
    summary: spec.summary,
    tags: [spec.tag],
    ...(spec.description && { description: spec.description }),
    ...(spec.auth === 'admin' && { description: `${spec.description ?? ''} Admins only.`.trim() }),
    ...SECURITY[spec.auth],
    parameters: [...pathParams, ...queryParameters(spec.query)],
    ...(requestBody && { requestBody }),
    responses: {
      [status]: { description: 'success', ...(content && { content }) },
      default: {
        description: 'error',
        content: {
          'application/json': { schema: { $ref: `#/components/schemas/${spec.errorBody === 'proxy' ? 'ProxyError' : 'ErrorResponse'}` } },
        },
      },
    },
  }
}

/** `:id` -> `{id}`; Hono's own route list is the source of which paths exist. */
export const openApiPath = (honoPath: string) => honoPath.replace(/:(\w+)/g, '{$1}')

export function openApiDocument(app: Hono<any>, serverUrl: string) {
  const paths: Record<string, Record<string, object>> = {}
  for (const r of app.routes) {
    if (!isSpecified(r.handler)) continue
    const path = openApiPath(r.path)
    ;(paths[path] ??= {})[r.method.toLowerCase()] = operation(path, r.handler[SPEC])
  }
  const schemas: Record<string, object> = { ErrorResponse, ProxyError, ...toJsonSchemaDefs(DEFINITIONS, config('output')) }
  return {
    openapi: '3.0.3',
    info: { title: 'registry-mirror: Node Registry API', version: '1.0' },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: { BearerAuth: { type: 'http', scheme: 'bearer' }, ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-KEY' } },
    },
  }
}
