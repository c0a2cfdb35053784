/** Puts nodes straight into a store (for states no public endpoint makes, such as bans or rankings). */
import { platformKeys, repositoryKey } from '../../src/domain/platform'
import type { Store } from '../../src/store/db'
import { writeSearchTexts } from '../../src/store/search-texts'
import realNodesFile from '../fixtures/real-nodes.json'

export interface SeedNode {
  id: string
  publisher?: string
  publisherName?: string
  name?: string
  description?: string
  author?: string
  tags?: string[]
  repository?: string
  os?: string[]
  accelerators?: string[]
  ranking?: number
  downloads?: number
  status?: 'active' | 'banned' | 'deleted'
  hostNodes?: string[]
  versionStatus?: 'active' | 'pending' | 'flagged'
  updatedAt?: string
}

const T = '2026-01-01T00:00:00.000Z'

/** Rows per INSERT: a few round trips for thousands of nodes (PostgreSQL pays one per statement), under SQLite's bound-value limit. */
const CHUNK = 400

export async function seedNodes(db: Store, nodes: SeedNode[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const publishers = new Map(nodes.map((n) => [n.publisher ?? 'acme', n.publisherName ?? `${n.publisher ?? 'acme'} publisher`]))
    for (const [id, name] of publishers) {
      await trx
        .insertInto('publishers')
        .values({ id, name, created_at: T, updated_at: T })
        .onConflict((oc) => oc.doNothing())
        .execute()
    }
    const versions = nodes.map(() => crypto.randomUUID())
    const nodeRows = nodes.map((n, i) => ({
      id: n.id,
      normalized_id: n.id.toLowerCase(),
      publisher_id: n.publisher ?? 'acme',
      name: n.name ?? n.id,
      description: n.description ?? '',
      author: n.author ?? '',
      tags_json: JSON.stringify(n.tags ?? []),
      repository: n.repository ?? '',
      repository_key: repositoryKey(n.repository ?? ''),
      supported_os_json: JSON.stringify(n.os ?? []),
      os_keys: platformKeys(n.os ?? []),
      supported_accelerators_json: JSON.stringify(n.accelerators ?? []),
      accelerator_keys: platformKeys(n.accelerators ?? []),
      search_ranking: n.ranking ?? 0,
      status: n.status ?? 'active',
      latest_version_id: versions[i]!,
      latest_version_status: n.versionStatus ?? 'active',
      created_at: T,
      updated_at: n.updatedAt ?? T,
    }))
    const versionRows = nodes.map((n, i) => ({
      id: versions[i]!,
      node_id: n.id,
      version: '1.0.0',
      status: n.versionStatus ?? 'active',
      created_at: T,
      updated_at: T,
    }))
    const hostRows = nodes.flatMap((n, i) => [...new Set(n.hostNodes ?? [])].map((name) => ({ version_id: versions[i]!, name })))
    for (let i = 0; i < nodeRows.length; i += CHUNK)
      await trx
        .insertInto('nodes')
        .values(nodeRows.slice(i, i + CHUNK))
        .execute()
    // Each node's narrow row of counts, with the copy of its ranking the list order reads (schema 17).
    const countRows = nodes.map((n) => ({ node_id: n.id, search_ranking: n.ranking ?? 0, downloads: n.downloads ?? 0 }))
    for (let i = 0; i < countRows.length; i += CHUNK)
      await trx
        .insertInto('node_downloads')
        .values(countRows.slice(i, i + CHUNK))
        .execute()
    for (let i = 0; i < versionRows.length; i += CHUNK)
      await trx
        .insertInto('node_versions')
        .values(versionRows.slice(i, i + CHUNK))
        .execute()
    for (let i = 0; i < hostRows.length; i += CHUNK)
      await trx
        .insertInto('host_nodes')
        .values(hostRows.slice(i, i + CHUNK))
        .execute()
    // What every write of a node writes with it (its document is left to the fill, as for nodes of older stores).
    for (let i = 0; i < nodeRows.length; i += CHUNK)
      await writeSearchTexts(
        trx,
        nodeRows.slice(i, i + CHUNK).map((n) => n.id),
      )
  })
}

/** One real node pack of test/fixtures/real-nodes.json. */
export interface RealNode {
  id: string
  name: string
  description: string
  author: string
  repository: string
  repohost_stars: number
  host_nodes: string[]
  publisher: string
}

export const REAL_NODES: readonly RealNode[] = (realNodesFile as { nodes: RealNode[] }).nodes

/** About 2,200 real node packs; their repository stars stand in for downloads. */
export function realNodes(): SeedNode[] {
  return REAL_NODES.map((n) => ({
    id: n.id,
    publisher: n.publisher,
    publisherName: n.publisher,
    name: n.name,
    description: n.description,
    author: n.author,
    repository: n.repository,
    downloads: n.repohost_stars,
    hostNodes: n.host_nodes,
  }))
}
