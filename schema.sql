-- registry-mirror schema, newest version, as SQLite holds it: the readable reference of the store.
-- The store is built and upgraded by the migrations in src/store/migrations/ (one source for SQLite and
-- PostgreSQL); test/unit/migrations.test.ts checks that they produce exactly this schema.
-- Timestamps are RFC 3339 UTC text with milliseconds; booleans are 0/1; *_json columns hold JSON.

CREATE TABLE users (
  id          TEXT PRIMARY KEY,
  email       TEXT NOT NULL DEFAULT '',
  name        TEXT NOT NULL DEFAULT '',
  is_admin    INTEGER NOT NULL DEFAULT 0,
  is_approved INTEGER NOT NULL DEFAULT 1,
  status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'banned')),
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

-- Bearer access tokens: only the SHA-256 of the token is kept, and its first 4 characters to show it masked
-- ('' for tokens made before version 7). A revoked or expired token identifies nobody. last_used_at is
-- written at most every few minutes per token.
CREATE TABLE access_tokens (
  id           TEXT PRIMARY KEY,
  token_hash   TEXT NOT NULL,
  token_prefix TEXT NOT NULL DEFAULT '',
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at   TEXT NOT NULL,
  expires_at   TEXT,
  last_used_at TEXT,
  revoked_at   TEXT,
  CONSTRAINT access_tokens_hash UNIQUE (token_hash)
);
CREATE INDEX access_tokens_user ON access_tokens(user_id);

CREATE TABLE publishers (
  id               TEXT PRIMARY KEY,
  name             TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  website          TEXT NOT NULL DEFAULT '',
  support          TEXT NOT NULL DEFAULT '',
  source_code_repo TEXT NOT NULL DEFAULT '',
  logo             TEXT NOT NULL DEFAULT '',
  status           TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'banned')),
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  -- set when the publisher was deleted: a tombstone, so its deleted nodes keep their publisher and its id stays taken
  deleted_at       TEXT,
  -- mirrored entities (here and on nodes and versions): the upstream it comes from (null: local), the status
  -- the upstream last gave it (a row that differs was changed here and keeps it), and the mark of the last full
  -- pass that saw it (or when a sync last wrote it)
  mirror_source_id  TEXT REFERENCES mirror_sources(id),
  mirror_status     TEXT NOT NULL DEFAULT '',
  mirror_checked_at TEXT NOT NULL DEFAULT ''
);

CREATE TABLE publisher_members (
  publisher_id TEXT NOT NULL REFERENCES publishers(id) ON DELETE CASCADE,
  user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role         TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  created_at   TEXT NOT NULL,
  -- A UUID v4 of its own (schema version 14), shown as members[].id. The default only let the migration add the
  -- column; every insert gives one (an empty id would collide with the next, under the unique index).
  id           TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (publisher_id, user_id)
);
CREATE INDEX publisher_members_user ON publisher_members(user_id);
CREATE UNIQUE INDEX publisher_members_id ON publisher_members(id);

-- Publisher access tokens (personal_access_token of the publish body): hash plus a display prefix.
CREATE TABLE publisher_tokens (
  id           TEXT PRIMARY KEY,
  publisher_id TEXT NOT NULL REFERENCES publishers(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  token_hash   TEXT NOT NULL UNIQUE,
  token_prefix TEXT NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE INDEX publisher_tokens_publisher ON publisher_tokens(publisher_id);

CREATE TABLE nodes (
  id                                TEXT PRIMARY KEY,
  normalized_id                     TEXT NOT NULL UNIQUE,
  publisher_id                      TEXT NOT NULL REFERENCES publishers(id),
  name                              TEXT NOT NULL,
  description                       TEXT NOT NULL DEFAULT '',
  author                            TEXT NOT NULL DEFAULT '',
  license                           TEXT NOT NULL DEFAULT '',
  icon                              TEXT NOT NULL DEFAULT '',
  banner_url                        TEXT NOT NULL DEFAULT '',
  repository                        TEXT NOT NULL DEFAULT '',
  -- lower-cased repository URL without scheme, www., trailing / and .git (for repository_url_search)
  repository_key                    TEXT NOT NULL DEFAULT '',
  category                          TEXT NOT NULL DEFAULT '',
  tags_json                         TEXT NOT NULL DEFAULT '[]',
  tags_admin_json                   TEXT NOT NULL DEFAULT '[]',
  supported_os_json                 TEXT NOT NULL DEFAULT '[]',
  supported_accelerators_json       TEXT NOT NULL DEFAULT '[]',
  -- normalised filter keys, '|a|b|' ('' when none declared), for LIKE matching in any SQL dialect
  os_keys                           TEXT NOT NULL DEFAULT '',
  accelerator_keys                  TEXT NOT NULL DEFAULT '',
  supported_hostui_version          TEXT NOT NULL DEFAULT '',
  supported_hostui_frontend_version TEXT NOT NULL DEFAULT '',
  preempted_host_node_names_json    TEXT NOT NULL DEFAULT '[]',
  translations_json                 TEXT NOT NULL DEFAULT '{}',
  repohost_stars                    INTEGER NOT NULL DEFAULT 0,
  search_ranking                    INTEGER NOT NULL DEFAULT 0,
  review_count                      INTEGER NOT NULL DEFAULT 0,
  star_total                        INTEGER NOT NULL DEFAULT 0,
  status                            TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'banned', 'deleted')),
  status_detail                     TEXT NOT NULL DEFAULT '',
  -- the version reads show as latest_version, and its status; recomputed on every version write
  latest_version_id                 TEXT,
  latest_version_status             TEXT,
  created_at                        TEXT NOT NULL,
  updated_at                        TEXT NOT NULL,
  -- 1 when the node is banned because its publisher was; a publisher unban restores exactly these
  banned_with_publisher             INTEGER NOT NULL DEFAULT 0,
  -- the upstream's rating of a mirrored node (it sends the mean, not the reviews); null for local nodes
  mirrored_rating                   DOUBLE PRECISION,
  -- mirrored nodes: as on publishers, and the owner the upstream last gave it (a claim here moves it)
  mirror_source_id                  TEXT REFERENCES mirror_sources(id),
  mirror_status                     TEXT NOT NULL DEFAULT '',
  mirror_owner                      TEXT NOT NULL DEFAULT '',
  mirror_checked_at                 TEXT NOT NULL DEFAULT ''
);
CREATE INDEX nodes_publisher ON nodes(publisher_id, id, status);
CREATE INDEX nodes_updated_at ON nodes(updated_at);
CREATE INDEX nodes_not_active ON nodes(status) WHERE status != 'active';

-- Each node's download count, in a narrow row that a count rewrites instead of the node's (every node has one).
-- search_ranking: a copy of the node's, written with it, so that the list order (ranking, downloads, id) is an index
-- here. serial, changed_at: the feed position of the node's last count (null before its first since schema 17):
-- counts are fed from here, and the feed lists a node once, at the newer of this serial and its changes row's.
CREATE TABLE node_downloads (
  node_id        TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE ON UPDATE CASCADE,
  search_ranking INTEGER NOT NULL DEFAULT 0,
  downloads      INTEGER NOT NULL DEFAULT 0,
  serial         INTEGER,
  changed_at     TEXT
);
CREATE INDEX node_downloads_order ON node_downloads(search_ranking DESC, downloads DESC, node_id);
CREATE INDEX node_downloads_serial ON node_downloads(serial) WHERE serial IS NOT NULL;

-- Each node's JSON as clients read it, rendered when the node is written: a page of nodes reads one row per node.
-- Without what changes apart from the node: its download count, its publisher (shown inside it) and whether its
-- latest version's archive can be downloaded here, put in when it is served. publisher_id and latest_version_id:
-- what it was rendered with; node_json: the node's own fields; version_json: its latest version (null when none)
-- without downloadUrl; download_path: that version's archive path. format: the rendering's format; a document of
-- another format (another executable's) is not read and is written again.
CREATE TABLE node_documents (
  node_id           TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  format            INTEGER NOT NULL,
  publisher_id      TEXT NOT NULL,
  latest_version_id TEXT,
  node_json         TEXT NOT NULL,
  version_json      TEXT,
  download_path     TEXT NOT NULL DEFAULT ''
);

-- Each node's searched text in narrow rows, for the SQL search that answers while the index warms (a scan of these
-- reads two fifths of the pages of a scan of nodes, and a row a node instead of one a host node name). Written with
-- the node's document. keywords: id, name, description, author and tags_json, a line each; host names: those of
-- the node's latest version, a line each ('' without any).
CREATE TABLE node_search_keywords (
  node_id TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  text    TEXT NOT NULL
);

CREATE TABLE node_search_host_names (
  node_id TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  names   TEXT NOT NULL
);

CREATE TABLE node_versions (
  id                                TEXT PRIMARY KEY,
  node_id                           TEXT NOT NULL REFERENCES nodes(id) ON UPDATE CASCADE,
  version                           TEXT NOT NULL,
  changelog                         TEXT NOT NULL DEFAULT '',
  dependencies_json                 TEXT NOT NULL DEFAULT '[]',
  deprecated                        INTEGER NOT NULL DEFAULT 0,
  status                            TEXT NOT NULL DEFAULT 'pending'
                                    CHECK (status IN ('active', 'banned', 'deleted', 'pending', 'flagged')),
  status_reason                     TEXT NOT NULL DEFAULT '',
  host_node_extract_status          TEXT NOT NULL DEFAULT 'pending'
                                    CHECK (host_node_extract_status IN ('pending', 'success', 'failed')),
  supported_os_json                 TEXT NOT NULL DEFAULT '[]',
  supported_accelerators_json       TEXT NOT NULL DEFAULT '[]',
  supported_hostui_version          TEXT NOT NULL DEFAULT '',
  supported_hostui_frontend_version TEXT NOT NULL DEFAULT '',
  tags_json                         TEXT NOT NULL DEFAULT '[]',
  tags_admin_json                   TEXT NOT NULL DEFAULT '[]',
  created_at                        TEXT NOT NULL,
  updated_at                        TEXT NOT NULL,
  -- mirrored versions: as on publishers, and when their host node names were asked for (the public
  -- registry serves them separately)
  mirror_source_id                  TEXT REFERENCES mirror_sources(id),
  mirror_status                     TEXT NOT NULL DEFAULT '',
  mirror_checked_at                 TEXT NOT NULL DEFAULT '',
  mirror_host_nodes_at              TEXT,
  UNIQUE (node_id, version)
);
CREATE INDEX node_versions_status_created ON node_versions(status, created_at DESC, id);
-- GET /versions across nodes, newest first: a page walks this index (status and node beside each, no table row read)
CREATE INDEX node_versions_created ON node_versions(created_at DESC, id, status, node_id);

-- One uploaded archive per version; the bytes live in the blob store under their SHA-256.
CREATE TABLE archives (
  version_id TEXT PRIMARY KEY REFERENCES node_versions(id) ON DELETE CASCADE,
  sha256     TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  format     TEXT NOT NULL CHECK (format IN ('zip', 'tar.gz')),
  created_at TEXT NOT NULL
);
CREATE INDEX archives_sha256 ON archives(sha256);

-- Host node class names (keys of NODE_CLASS_MAPPINGS) a version's archive provides.
CREATE TABLE host_nodes (
  version_id TEXT NOT NULL REFERENCES node_versions(id) ON DELETE CASCADE,
  name       TEXT NOT NULL,
  PRIMARY KEY (version_id, name)
);
CREATE INDEX host_nodes_name ON host_nodes(name);

-- One review per reviewer per node; reviewer is 'user:<id>' or 'addr:<client address>'.
CREATE TABLE reviews (
  node_id    TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE ON UPDATE CASCADE,
  reviewer   TEXT NOT NULL,
  star       INTEGER NOT NULL CHECK (star BETWEEN 1 AND 5),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (node_id, reviewer)
);

-- This registry's id (a reset upstream gets a new one) and the last change serial handed out.
CREATE TABLE registry_instance (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  instance_id TEXT NOT NULL,
  last_serial INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL
);

-- The change feed: each publisher, node and version at the serial of its latest committed change.
CREATE TABLE changes (
  serial     INTEGER PRIMARY KEY,
  kind       TEXT NOT NULL CHECK (kind IN ('publisher', 'node', 'version')),
  entity_id  TEXT NOT NULL,
  changed_at TEXT NOT NULL,
  UNIQUE (kind, entity_id)
);

-- Who did what: moderation, claims, deletions, members and tokens. Never a credential.
CREATE TABLE audit_log (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  at            TEXT NOT NULL,
  actor_id      TEXT,
  actor_address TEXT NOT NULL DEFAULT '',
  action        TEXT NOT NULL,
  target_kind   TEXT NOT NULL,
  target_id     TEXT NOT NULL,
  before_json   TEXT,
  after_json    TEXT
);
CREATE INDEX audit_log_at ON audit_log(at);

-- The version whose signed upload has started: a second PUT is refused at once.
CREATE TABLE upload_claims (
  version_id TEXT PRIMARY KEY REFERENCES node_versions(id) ON DELETE CASCADE,
  claimed_at TEXT NOT NULL
);

-- Video tasks started through the proxy: who started which provider task and its last known state. The request
-- is kept as a summary (image URLs without their query, data: URIs as their size); never a credential.
CREATE TABLE video_tasks (
  id                   TEXT PRIMARY KEY,
  task_id              TEXT NOT NULL UNIQUE,
  caller               TEXT NOT NULL,
  state                TEXT NOT NULL,
  err_code             TEXT NOT NULL DEFAULT '',
  credits              INTEGER NOT NULL DEFAULT 0,
  request_json         TEXT NOT NULL,
  callback_secret_hash TEXT,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL
);

-- Images staged for the video provider to fetch (the bytes are a blob); swept a day after staging.
CREATE TABLE staged_images (
  id           TEXT PRIMARY KEY,
  caller       TEXT NOT NULL,
  file_name    TEXT NOT NULL,
  content_type TEXT,
  state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'uploading', 'ready')),
  media_type   TEXT,
  sha256       TEXT,
  size_bytes   INTEGER,
  created_at   TEXT NOT NULL,
  uploaded_at  TEXT
);
CREATE INDEX staged_images_created_at ON staged_images(created_at);
CREATE INDEX staged_images_sha256 ON staged_images(sha256);

-- The upstreams this registry mirrors: an upstream's base URL, or bundle:<instance id> for imported bundles.
CREATE TABLE mirror_sources (
  id                   TEXT PRIMARY KEY,
  kind                 TEXT NOT NULL CHECK (kind IN ('feed', 'public', 'bundle')),
  upstream_instance    TEXT NOT NULL DEFAULT '',
  -- feeds and bundles: the last serial applied; the public registry: when the last completed pass started
  cursor_serial        INTEGER NOT NULL DEFAULT 0,
  cursor_time          TEXT NOT NULL DEFAULT '',
  archives             TEXT NOT NULL DEFAULT 'none' CHECK (archives IN ('none', 'eager', 'lazy')),
  runs_since_full      INTEGER NOT NULL DEFAULT 0,
  full_pass_started_at TEXT,
  last_attempt_at      TEXT,
  last_success_at      TEXT,
  last_error           TEXT NOT NULL DEFAULT '',
  last_summary_json    TEXT NOT NULL DEFAULT '{}',
  created_at           TEXT NOT NULL
);

-- Archives of mirrored versions upstream; the SHA-256 is pinned on first fetch and other bytes are refused.
CREATE TABLE mirror_archives (
  version_id TEXT PRIMARY KEY REFERENCES node_versions(id) ON DELETE CASCADE,
  source_id  TEXT NOT NULL REFERENCES mirror_sources(id),
  url        TEXT NOT NULL,
  sha256     TEXT,
  size_bytes INTEGER,
  etag       TEXT,
  problem    TEXT NOT NULL DEFAULT '',
  problem_at TEXT
);
CREATE INDEX mirror_archives_sha256 ON mirror_archives(sha256);

-- Secrets every instance of the registry shares (with PostgreSQL: the URL-signing key, made by the first to start).
CREATE TABLE registry_secrets (
  name       TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- Fixed-window rate limits shared by every instance: the window's start and the events counted in it, per key.
CREATE TABLE rate_limits (
  key               TEXT PRIMARY KEY,
  window_started_at TEXT NOT NULL,
  count             INTEGER NOT NULL
);
CREATE INDEX rate_limits_window ON rate_limits(window_started_at);

-- Bytes a writer is about to make visible (or bind a row to): blobs sweep leaves them alone. Dropped by the
-- transaction that writes the row; one left by a killed process expires.
CREATE TABLE blob_intents (
  id         TEXT NOT NULL,
  sha256     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (id, sha256)
);
CREATE INDEX blob_intents_sha256 ON blob_intents(sha256);
