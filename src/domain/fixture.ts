/**
 * The CI fixture file that `serve --fixture FILE` loads: users with fixed tokens, publishers with members and
 * fixed publisher tokens, nodes, their versions and inline archives. One valibot schema is the reference; its
 * JSON Schema (`registry-mirror fixture --schema`, docs/fixture.schema.json) is generated from it.
 */
import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import { NODE_ID_MAX, NODE_ID_PATTERN, PUBLISHER_ID_MAX, USER_EMAIL_MAX, USER_ID_PATTERN, USER_NAME_MAX } from './ids'
import { boundedObject } from './json-bounds'
import { SEMVER_PATTERN } from './semver'
import { MAX_STORED_INT } from './stored-int'

type Described<T> = v.GenericSchema<T>
const describe = <T>(schema: v.GenericSchema<T>, description?: string): Described<T> =>
  description ? v.pipe(schema, v.description(description)) : schema
const text = (max: number, description?: string) =>
  v.optional(describe(v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`)), description))
const texts = (maxItems: number, maxLength: number, description?: string) =>
  v.optional(
    describe(
      v.pipe(
        v.array(v.pipe(v.string('must be a string'), v.maxLength(maxLength, `must be at most ${maxLength} characters`)), 'must be a list'),
        v.maxLength(maxItems, `must have at most ${maxItems} items`),
      ),
      description,
    ),
  )
const count = (description: string) =>
  v.optional(
    v.pipe(
      v.number('must be a number'),
      v.safeInteger('must be a whole number'),
      v.minValue(0, 'must be 0 or more'),
      v.maxValue(MAX_STORED_INT, `must be at most ${MAX_STORED_INT}`),
      v.description(description),
    ),
  )
const timestamp = (description: string) =>
  v.optional(
    v.pipe(
      v.string('must be a string'),
      v.isoTimestamp('must be an RFC 3339 date-time such as 2026-01-01T00:00:00Z'),
      v.description(description),
    ),
  )
const list = <T extends v.GenericSchema>(item: T, description: string) =>
  v.optional(v.pipe(v.array(item, 'must be a list'), v.description(description)))

/** A fixed credential the CI script also knows; stored, like every token, only as its SHA-256. */
const Token = v.pipe(
  v.string('must be a string'),
  v.regex(/^[!-~]{16,256}$/, 'must be 16 to 256 printable ASCII characters without spaces'),
  v.description('A fixed token (16 to 256 printable ASCII characters, no spaces); stored only as its SHA-256.'),
)

/** The base64 alphabet, by character code. */
const BASE64_CHARS = new Uint8Array(128).map((_, c) => Number(/[A-Za-z0-9+/]/.test(String.fromCharCode(c))))

/**
 * Standard base64 with its padding, checked in one pass: valibot's pattern is slower (150 ms a MiB) and gives up on
 * text over about 5 MiB, calling a valid 8 MB archive "not base64".
 */
export function isBase64(text: string): boolean {
  if (text.length % 4) return false
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  for (let i = 0; i < text.length - padding; i++) {
    const c = text.charCodeAt(i)
    if (c >= 128 || !BASE64_CHARS[c]) return false
  }
  return true
}
export const FixtureUserSchema = v.strictObject({
  id: v.pipe(v.string('must be a string'), v.regex(USER_ID_PATTERN, 'must be 1-128 letters, digits, ".", "_", "@" or "-"')),
  email: text(USER_EMAIL_MAX, 'Default: ID@example.com.'),
  name: text(USER_NAME_MAX, 'Default: the id.'),
  admin: v.optional(v.boolean('must be true or false')),
  status: v.optional(v.picklist(['active', 'banned'], 'must be "active" or "banned"')),
  tokens: list(Token, 'Bearer access tokens of this user (Authorization: Bearer TOKEN).'),
})

export const FixtureMemberSchema = v.strictObject({
  user: v.pipe(v.string('must be a string'), v.description('A user id, of the fixture or already in the store.')),
  role: v.picklist(['owner', 'member'], 'must be "owner" or "member"'),
})

export const FixturePublisherTokenSchema = v.strictObject({
  token: Token,
  name: text(200, 'Default: "fixture".'),
  description: text(2000),
})

export const FixturePublisherSchema = v.strictObject({
  id: v.pipe(
    v.string('must be a string'),
    v.maxLength(PUBLISHER_ID_MAX, `must be at most ${PUBLISHER_ID_MAX} characters`),
    // As the ids of real publishers are (some start with a digit); creating one through the API needs a letter first.
    v.regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lowercase letters, digits and hyphens, starting with a letter or digit'),
  ),
  name: text(200, 'Default: the id.'),
  description: text(5000),
  website: text(2000),
  support: text(2000),
  source_code_repo: text(2000),
  logo: text(2000),
  status: v.optional(v.picklist(['active', 'banned'], 'must be "active" or "banned"')),
  created_at: timestamp('Default: the fixture time.'),
  members: list(FixtureMemberSchema, 'Owners and members.'),
  tokens: list(FixturePublisherTokenSchema, 'Publisher access tokens (personal_access_token of the publishing CLI).'),
})

export const VERSION_STATUSES = ['active', 'pending', 'flagged', 'banned', 'deleted'] as const

export const FixtureVersionSchema = v.strictObject({
  version: v.pipe(
    v.string('must be a string'),
    v.maxLength(100, 'must be at most 100 characters'),
    v.regex(SEMVER_PATTERN, 'must be a semantic version'),
  ),
  id: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'must be a lowercase UUID v4'),
      v.description('Default: a UUID derived from the node id and version, the same on every load.'),
    ),
  ),
  status: v.optional(v.picklist(VERSION_STATUSES, `must be one of ${VERSION_STATUSES.join(', ')}`)),
  status_reason: text(2000),
  changelog: text(20_000),
  dependencies: texts(1000, 1000),
  deprecated: v.optional(v.boolean('must be true or false')),
  supported_os: texts(50, 200),
  supported_accelerators: texts(50, 200),
  supported_hostui_version: text(200),
  supported_hostui_frontend_version: text(200),
  tags: texts(50, 100),
  host_nodes: texts(10_000, 200, 'Host node class names, for a version without an archive (an archive has its own extracted).'),
  archive_base64: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.check(isBase64, 'must be base64'),
      v.description('The archive (zip or tar.gz) in base64; inspected as an upload is, its host nodes extracted.'),
    ),
  ),
  created_at: timestamp('Default: the fixture time.'),
})

export const FixtureNodeSchema = v.strictObject({
  id: v.pipe(
    v.string('must be a string'),
    v.maxLength(NODE_ID_MAX, `must be at most ${NODE_ID_MAX} characters`),
    v.regex(NODE_ID_PATTERN, 'must be ASCII letters, digits, "_", "-" or ".", starting and ending with a letter or digit'),
  ),
  publisher: v.pipe(v.string('must be a string'), v.description('A publisher id, of the fixture or already in the store.')),
  name: text(200, 'Default: the id.'),
  description: text(1000),
  author: text(200),
  license: text(2000, 'As the publishing CLI sends it, e.g. "{\\"file\\": \\"LICENSE\\"}".'),
  icon: text(2000),
  banner_url: text(2000),
  repository: text(2000),
  category: text(200),
  tags: texts(50, 100),
  supported_os: texts(50, 200),
  supported_accelerators: texts(50, 200),
  supported_hostui_version: text(200),
  supported_hostui_frontend_version: text(200),
  preempted_host_node_names: texts(1000, 200),
  translations: v.optional(boundedObject('must be an object')),
  repohost_stars: count('Stars of the repository (github_stars).'),
  search_ranking: count('Orders lists before downloads.'),
  downloads: count('Install count.'),
  status: v.optional(v.picklist(['active', 'banned', 'deleted'], 'must be "active", "banned" or "deleted"')),
  status_detail: text(2000),
  created_at: timestamp('Default: the fixture time.'),
  versions: list(FixtureVersionSchema, 'Versions of the node; "latest_version" follows from them as after publishing.'),
})

export const FixtureSchema = v.pipe(
  v.strictObject(
    {
      $schema: v.optional(v.string('must be a string')),
      time: timestamp('created_at and updated_at of every row the fixture writes, unless one gives its own. Default: the load time.'),
      users: list(FixtureUserSchema, 'Users, with fixed access tokens.'),
      publishers: list(FixturePublisherSchema, 'Publishers, with members and fixed publisher tokens.'),
      nodes: list(FixtureNodeSchema, 'Nodes and their versions.'),
    },
    'must be a JSON object',
  ),
  v.title('registry-mirror fixture'),
  v.description('What `registry-mirror serve --fixture FILE` loads at start.'),
)

export type Fixture = v.InferOutput<typeof FixtureSchema>
export type FixtureUser = v.InferOutput<typeof FixtureUserSchema>
export type FixturePublisher = v.InferOutput<typeof FixturePublisherSchema>
export type FixtureNode = v.InferOutput<typeof FixtureNodeSchema>
export type FixtureVersion = v.InferOutput<typeof FixtureVersionSchema>

/** The JSON Schema (draft 2020-12) of fixture files, for editors and other tools. */
export function fixtureJsonSchema(): Record<string, unknown> {
  return toJsonSchema(FixtureSchema, {
    target: 'draft-2020-12',
    errorMode: 'throw',
    ignoreActions: ['raw_check'],
    // The one check JSON Schema can say: archives in base64.
    overrideAction: ({ valibotAction, jsonSchema }) =>
      valibotAction.type === 'check' && (valibotAction as v.CheckAction<string, string>).requirement === isBase64
        ? { ...jsonSchema, contentEncoding: 'base64' }
        : undefined,
  }) as Record<string, unknown>
}
