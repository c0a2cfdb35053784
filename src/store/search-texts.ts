/**
 * Each node's searched text in narrow rows (schema.sql: node_search_keywords, node_search_host_names), which the SQL
 * search scans instead of the node rows and every version's host node names. Made by SQL from the rows as they
 * are, in the write that changed them, wherever a node's document is written.
 */
import { sql, type RawBuilder } from 'kysely'
import { joinedText, type Store } from './db'
import { preparedList } from './prepared'

const LINE = '\n'

/** id, name, description, author and tags_json, a line each (a keyword with a line break may match across two). */
export const keywordsOfNode = (): RawBuilder<string> =>
  sql`nodes.id || ${LINE} || nodes.name || ${LINE} || nodes.description || ${LINE} || nodes.author || ${LINE} || nodes.tags_json`

/** The host node names of the node's latest version, a line each, in name order ('' without any). */
export const hostNamesOfNode = (db: Store): RawBuilder<string> =>
  sql`coalesce((select ${joinedText(db, 'host_nodes.name', LINE)} from host_nodes where host_nodes.version_id = nodes.latest_version_id), '')`

const writeKeywords = preparedList<{}, never>((db, _p, ids) =>
  db
    .insertInto('node_search_keywords')
    .columns(['node_id', 'text'])
    .expression(
      db
        .selectFrom('nodes')
        .select(['nodes.id', keywordsOfNode().as('text')])
        .where('nodes.id', 'in', ids),
    )
    .onConflict((oc) =>
      oc
        .column('node_id')
        .doUpdateSet({ text: (eb) => eb.ref('excluded.text') })
        .where((eb) => eb('node_search_keywords.text', '!=', eb.ref('excluded.text'))),
    ),
)

const writeHostNames = preparedList<{}, never>((db, _p, ids) =>
  db
    .insertInto('node_search_host_names')
    .columns(['node_id', 'names'])
    .expression(
      db
        .selectFrom('nodes')
        .select(['nodes.id', hostNamesOfNode(db).as('names')])
        .where('nodes.id', 'in', ids),
    )
    .onConflict((oc) =>
      oc
        .column('node_id')
        .doUpdateSet({ names: (eb) => eb.ref('excluded.names') })
        .where((eb) => eb('node_search_host_names.names', '!=', eb.ref('excluded.names'))),
    ),
)

/**
 * The texts of these nodes as their rows (and their latest versions' host nodes) are now. Most writes of a node
 * change neither (a review, a ban): a text left as it was is not written again. Compiled once (store/prepared.ts).
 */
export async function writeSearchTexts(db: Store, ids: readonly string[]): Promise<void> {
  await writeKeywords(db, {}, ids)
  await writeHostNames(db, {}, ids)
}
