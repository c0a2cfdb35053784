/** The OpenAPI 3 document of everything this server serves, built from one table of operations. */

type Param = [name: string, type: 'string' | 'integer' | 'boolean' | 'array', description: string]
interface Op {
  summary: string
  auth?: 'bearer' | 'optional'
  query?: Param[]
  body?: string
  bodyContentType?: string
  status?: number
  response?: string
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const arrayOf = (name: string) => ({ type: 'array', items: ref(name) })
const LIST_FILTERS: Param[] = [
  ['page', 'integer', 'page number, from 1 (default 1)'],
  ['limit', 'integer', 'nodes per page (default 10, at most 100)'],
  ['search', 'string', 'keyword search'],
  ['repository_url_search', 'string', 'substring of the normalised repository URL'],
  ['host_node_search', 'string', 'host node class name (alias comfy_node_search)'],
  ['supported_os', 'string', 'hierarchical OS filter, levels joined by " :: "'],
  ['supported_accelerator', 'string', 'accelerator filter'],
  ['include_banned', 'boolean', 'include banned nodes'],
]

const OPERATIONS: Record<string, Record<string, Op>> = {
  '/nodes/search': { get: { summary: 'Search nodes', query: LIST_FILTERS, response: 'NodePage' } },
  '/nodes': {
    get: {
      summary: 'List nodes',
      query: [
        ...LIST_FILTERS,
        ['node_id', 'array', 'only these ids (repeat the key)'],
        ['timestamp', 'string', 'only nodes changed after this date-time'],
      ],
      response: 'NodePage',
    },
  },
  '/nodes/{nodeId}': { get: { summary: 'Read a node', response: 'Node' } },
  '/nodes/{nodeId}/install': {
    get: {
      summary: 'Version to install (counts a download)',
      query: [['version', 'string', 'a version; default the latest']],
      response: 'NodeVersion',
    },
  },
  '/nodes/{nodeId}/versions': {
    get: {
      summary: 'List versions of a node',
      query: [
        ['statuses', 'array', 'NodeVersionStatus values (repeat the key)'],
        ['include_status_reason', 'boolean', 'fill status_reason'],
      ],
      response: 'NodeVersionList',
    },
  },
  '/nodes/{nodeId}/versions/{version}': { get: { summary: 'Read a version', response: 'NodeVersion' } },
  '/nodes/{nodeId}/versions/{version}/host-nodes': { get: { summary: 'Host node names a version provides', response: 'HostNodes' } },
  '/nodes/{nodeId}/versions/{version}/comfy-nodes': {
    get: { summary: 'Host node names, in the upstream shape {comfy_nodes, totalNumberOfPages}', response: 'Any' },
  },
  '/host-nodes/{name}/node': {
    get: { summary: 'The node providing a host node class (alias /comfy-nodes/{name}/node)', response: 'Node' },
  },
  '/comfy-nodes/{name}/node': { get: { summary: 'Alias of /host-nodes/{name}/node', response: 'Node' } },
  '/nodes/{nodeId}/reviews': {
    post: { summary: 'Rate a node', auth: 'optional', query: [['star', 'integer', '1 to 5 (required)']], response: 'Node' },
  },
  '/bulk/nodes/versions': { post: { summary: 'Look up many versions', body: 'BulkRequest', response: 'BulkResponse' } },
  '/publishers': {
    get: { summary: 'List publishers', auth: 'optional', response: 'PublisherList' },
    post: { summary: 'Create a publisher', auth: 'bearer', body: 'Publisher', status: 201, response: 'Publisher' },
  },
  '/publishers/validate': {
    get: {
      summary: 'Check that a publisher id is available',
      query: [['username', 'string', 'the id to check']],
      response: 'Availability',
    },
  },
  '/publishers/{publisherId}': {
    get: { summary: 'Read a publisher', auth: 'optional', response: 'Publisher' },
    put: { summary: 'Update a publisher', auth: 'bearer', body: 'Publisher', response: 'Publisher' },
  },
  '/publishers/{publisherId}/nodes': {
    get: {
      summary: "A publisher's nodes",
      query: [
        ['page', 'integer', 'default 1'],
        ['limit', 'integer', 'default 100, at most 1000'],
        ['include_banned', 'boolean', ''],
      ],
      response: 'NodeList',
    },
  },
  '/publishers/{publisherId}/tokens': {
    get: { summary: 'List publisher tokens (masked)', auth: 'bearer', response: 'TokenList' },
    post: { summary: 'Create a publisher token (shown once)', auth: 'bearer', body: 'TokenRequest', status: 201, response: 'NewToken' },
  },
  '/publishers/{publisherId}/tokens/{tokenId}': { delete: { summary: 'Delete a publisher token', auth: 'bearer', status: 204 } },
  '/publishers/{publisherId}/nodes/{nodeId}/versions': {
    post: {
      summary: 'Create a version; PUT the archive to signedUrl',
      auth: 'optional',
      body: 'PublishRequest',
      status: 201,
      response: 'PublishResponse',
    },
  },
  '/publishers/{publisherId}/nodes/{nodeId}/versions/{versionId}': {
    put: { summary: 'Update changelog or deprecation', auth: 'bearer', body: 'VersionUpdate', response: 'NodeVersion' },
  },
  '/users': { get: { summary: 'The current user', auth: 'bearer', response: 'User' } },
  '/users/publishers/': { get: { summary: "The current user's publishers", auth: 'bearer', response: 'PublisherList' } },
  '/archives/{publisherId}/{nodeId}/{version}/node.zip': {
    get: { summary: 'Download an archive (ETag, Range)', response: 'Archive' },
    put: {
      summary: 'Upload an archive through a signed URL',
      body: 'Archive',
      bodyContentType: 'application/zip',
      query: [
        ['expires', 'integer', ''],
        ['signature', 'string', ''],
      ],
      response: 'UploadResponse',
    },
  },
  '/health': { get: { summary: 'Liveness', response: 'Health' } },
  '/ready': { get: { summary: 'Readiness: database, storage, search index', response: 'Ready' } },
  '/openapi': { get: { summary: 'This document', response: 'Any' } },
}

const str = { type: 'string' }
const strs = { type: 'array', items: str }
const int = { type: 'integer' }
const bool = { type: 'boolean' }
const obj = (properties: Record<string, unknown>, required?: string[]) => ({ type: 'object', properties, ...(required && { required }) })

const VERSION_PROPS = {
  id: str,
  node_id: str,
  version: str,
  changelog: str,
  dependencies: strs,
  deprecated: bool,
  status: {
    type: 'string',
    enum: [
      'NodeVersionStatusActive',
      'NodeVersionStatusDeleted',
      'NodeVersionStatusBanned',
      'NodeVersionStatusPending',
      'NodeVersionStatusFlagged',
    ],
  },
  status_reason: str,
  host_node_extract_status: str,
  createdAt: { type: 'string', format: 'date-time' },
  downloadUrl: str,
  supported_os: strs,
  supported_accelerators: strs,
  supported_hostui_version: str,
  supported_hostui_frontend_version: str,
  tags: strs,
  tags_admin: strs,
}

const SCHEMAS: Record<string, unknown> = {
  Any: {},
  ErrorResponse: obj({ error: str, message: str }, ['error', 'message']),
  User: obj({ id: str, email: str, name: str, isAdmin: bool, isApproved: bool }),
  PublisherMember: obj({ id: str, role: { type: 'string', enum: ['owner', 'member'] }, user: obj({ id: str, name: str, email: str }) }),
  Publisher: obj({
    id: str,
    name: str,
    description: str,
    website: str,
    support: str,
    source_code_repo: str,
    logo: str,
    createdAt: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: ['PublisherStatusActive', 'PublisherStatusBanned'] },
    members: arrayOf('PublisherMember'),
  }),
  PublisherList: arrayOf('Publisher'),
  NodeVersion: obj(VERSION_PROPS),
  NodeVersionList: arrayOf('NodeVersion'),
  Node: obj({
    id: str,
    name: str,
    description: str,
    author: str,
    license: str,
    icon: str,
    banner_url: str,
    repository: str,
    category: str,
    tags: strs,
    tags_admin: strs,
    downloads: int,
    rating: { type: 'number' },
    repohost_stars: int,
    search_ranking: int,
    status: { type: 'string', enum: ['NodeStatusActive', 'NodeStatusDeleted', 'NodeStatusBanned'] },
    status_detail: str,
    supported_os: strs,
    supported_accelerators: strs,
    supported_hostui_version: str,
    supported_hostui_frontend_version: str,
    preempted_host_node_names: strs,
    translations: { type: 'object' },
    created_at: { type: 'string', format: 'date-time' },
    publisher: ref('Publisher'),
    latest_version: ref('NodeVersion'),
  }),
  NodeList: arrayOf('Node'),
  NodePage: obj({ nodes: arrayOf('Node'), page: int, limit: int, total: int, totalPages: int }),
  HostNodes: obj({ node_id: str, version: str, host_nodes: strs }),
  BulkRequest: obj({ node_versions: { type: 'array', items: obj({ node_id: str, version: str }) } }),
  BulkResponse: obj({
    node_versions: {
      type: 'array',
      items: obj({
        identifier: obj({ node_id: str, version: str }),
        status: { type: 'string', enum: ['success', 'not_found', 'error'] },
        node_version: ref('NodeVersion'),
        error_message: str,
      }),
    },
  }),
  Availability: obj({ isAvailable: bool }),
  TokenRequest: obj({ name: str, description: str }, ['name']),
  NewToken: obj({ token: str }),
  TokenList: { type: 'array', items: obj({ id: str, name: str, description: str, createdAt: str, token: str }) },
  PublishRequest: obj({ personal_access_token: str, node: ref('Node'), node_version: ref('NodeVersion') }, ['node_version']),
  PublishResponse: obj({ node_version: ref('NodeVersion'), signedUrl: str }),
  VersionUpdate: obj({ changelog: str, deprecated: bool }),
  UploadResponse: obj({ node_version: ref('NodeVersion') }),
  Archive: { type: 'string', format: 'binary' },
  Health: obj({ status: str }),
  Ready: obj({
    status: str,
    database: str,
    storage: str,
    search: obj({ ready: bool, indexed: int, stored: int, engine: str, state: str }),
  }),
}

function operation(path: string, op: Op) {
  const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: str }))
  const queryParams = (op.query ?? []).map(([name, type, description]) => ({
    name,
    in: 'query',
    description,
    schema: type === 'array' ? strs : { type },
    ...(type === 'array' && { style: 'form', explode: true }),
  }))
  const status = String(op.status ?? 200)
  const content = (schema: string, type = 'application/json') => ({ content: { [type]: { schema: ref(schema) } } })
  return {
    summary: op.summary,
    ...(op.auth === 'bearer' && { security: [{ BearerAuth: [] }] }),
    ...(op.auth === 'optional' && { security: [{}, { BearerAuth: [] }] }),
    parameters: [...pathParams, ...queryParams],
    ...(op.body && { requestBody: { required: true, ...content(op.body, op.bodyContentType) } }),
    responses: {
      [status]: {
        description: 'success',
        ...(op.response && content(op.response, op.response === 'Archive' ? 'application/zip' : 'application/json')),
      },
      default: { description: 'error', ...content('ErrorResponse') },
    },
  }
}

export function openApiDocument(serverUrl: string) {
  const paths = Object.fromEntries(
    Object.entries(OPERATIONS).map(([path, ops]) => [
      path,
      Object.fromEntries(Object.entries(ops).map(([m, op]) => [m, operation(path, op)])),
    ]),
  )
  return {
    openapi: '3.0.2',
    info: { title: 'registry-mirror: Node Registry API', version: '1.0' },
    servers: [{ url: serverUrl }],
    paths,
    components: { schemas: SCHEMAS, securitySchemes: { BearerAuth: { type: 'http', scheme: 'bearer' } } },
  }
}
