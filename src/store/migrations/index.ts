/** Every schema step in order; the last one's version is the schema this executable writes. */
import * as baseline from './001-baseline'
import * as changeFeed from './002-change-feed'
import * as videoProxy from './003-video-proxy'
import * as tokenIds from './004-token-ids'
import * as moderation from './005-moderation'
import * as mirror from './006-mirror'
import * as sharedState from './007-shared-state'
import * as mirrorOriginColumns from './008-mirror-origin-columns'
import * as nodeDocuments from './009-node-documents'
import * as nodeDocumentsTable from './010-node-documents-table'
import * as versionsNewestFirst from './011-versions-newest-first'
import * as publisherNodesInIdOrder from './012-publisher-nodes-in-id-order'
import * as searchTexts from './013-search-texts'
import * as memberIds from './014-member-ids'
import * as reviewTotals from './015-review-totals'
import * as blobIntents from './016-blob-intents'
import * as nodeDownloads from './017-node-downloads'
import type { Migration } from './migration'

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'baseline', up: baseline.up },
  { version: 2, name: 'change feed, audit log, upload claims', up: changeFeed.up },
  { version: 3, name: 'video tasks and staged images', up: videoProxy.up },
  { version: 4, name: 'access token ids, expiry, last use, revocation', up: tokenIds.up },
  { version: 5, name: 'publisher bans and deleted publishers', up: moderation.up },
  { version: 6, name: 'mirroring: sources, origins, upstream archives', up: mirror.up },
  { version: 7, name: 'shared secrets and rate limits (several instances)', up: sharedState.up },
  { version: 8, name: 'mirror origins on the entity rows', up: mirrorOriginColumns.up },
  { version: 9, name: 'rendered node documents', up: nodeDocuments.up },
  { version: 10, name: 'node documents in a table of their own', up: nodeDocumentsTable.up },
  { version: 11, name: 'versions newest first across nodes', up: versionsNewestFirst.up },
  { version: 12, name: "a publisher's nodes in id order", up: publisherNodesInIdOrder.up },
  { version: 13, name: "each node's searched text in narrow rows", up: searchTexts.up },
  { version: 14, name: 'publisher memberships get UUIDs', up: memberIds.up },
  { version: 15, name: 'review totals that do not match their reviews computed again', up: reviewTotals.up },
  { version: 16, name: 'blob intents; archives found by their SHA-256', up: blobIntents.up },
  { version: 17, name: 'download counts in a narrow table, fed from there', up: nodeDownloads.up },
]

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version
