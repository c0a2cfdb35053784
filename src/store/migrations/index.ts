/** Every schema step in order; the last one's version is the schema this executable writes. */
import * as baseline from './001-baseline'
import * as changeFeed from './002-change-feed'
import * as videoProxy from './003-video-proxy'
import * as nodeStatusIndex from './008-node-status-index'
import type { Migration } from './migration'

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'baseline', up: baseline.up },
  { version: 2, name: 'change feed, audit log, upload claims', up: changeFeed.up },
  // Numbered 4 on its branch; renumbered to follow whatever precedes it when branches merge.
  { version: 3, name: 'video tasks and staged images', up: videoProxy.up },
  // Numbered 8 on its branch (issue 11, performance); renumbered to follow whatever precedes it when branches merge.
  { version: 4, name: 'index on node status', up: nodeStatusIndex.up },
]

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version
