/** Every schema step in order; the last one's version is the schema this executable writes. */
import * as baseline from './001-baseline'
import * as changeFeed from './002-change-feed'
import * as mirror from './005-mirror'
import type { Migration } from './migration'

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'baseline', up: baseline.up },
  { version: 2, name: 'change feed, audit log, upload claims', up: changeFeed.up },
  // 3 and 4 are taken by branches merged alongside this one; numbers may be renumbered at merge.
  { version: 5, name: 'mirroring: sources, origins, upstream archives', up: mirror.up },
]

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version
