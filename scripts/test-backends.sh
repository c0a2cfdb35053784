#!/usr/bin/env bash
# Throwaway backends for the second test pass: a PostgreSQL 15 server (Debian's, initdb into DIR as an unprivileged
# user) and an S3-compatible server (s3rver, a devDependency), both on 127.0.0.1 on free ports.
#   eval "$(scripts/test-backends.sh start DIR)"   starts both, prints the REGISTRY_MIRROR_TEST_* variables to export
#   scripts/test-backends.sh stop DIR              stops both and removes DIR
# Durability is off (fsync, synchronous_commit): the data lives as long as the test run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH" # bun is a devDependency

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
PG_BIN=/usr/lib/postgresql/15/bin
BUCKET=registry-test

# Runs a command as the owner of the PostgreSQL files: postgres when we are root (initdb refuses root), else us.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  bun -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)'
}

ensure_postgres() {
  [ -x "$PG_BIN/initdb" ] && return 0
  local sudo=''
  [ "$(id -u)" -eq 0 ] || sudo='sudo'
  echo "installing postgresql-15 (apt)" >&2
  $sudo apt-get update -q >&2 && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15 >&2
  [ -x "$PG_BIN/initdb" ]
}

start() {
  mkdir -p "$dir/pg" "$dir/s3"
  chmod 711 "$dir" # the server user must reach its directory inside
  ensure_postgres
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir/pg"
  chmod 700 "$dir/pg"
  local pg_port s3_port
  pg_port=$(free_port)
  s3_port=$(free_port)
  as_pg "$PG_BIN/initdb" -D "$dir/pg/data" -U postgres --auth=trust --locale=C.UTF-8 --encoding=UTF8 >"$dir/pg-initdb.log" 2>&1 ||
    { cat "$dir/pg-initdb.log" >&2; exit 1; }
  as_pg "$PG_BIN/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $pg_port -k $dir/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >&2 || { cat "$dir/pg/server.log" >&2; exit 1; }

  # s3rver makes a truncated listing's continuation token with DES, which OpenSSL 3 (Node 17 on) has only in its legacy
  # provider: without it every listing of more than one page (1,000 keys) failed with InternalError.
  node --openssl-legacy-provider node_modules/s3rver/bin/s3rver.js -d "$dir/s3" -a 127.0.0.1 -p "$s3_port" --configure-bucket "$BUCKET" -s \
    >"$dir/s3.log" 2>&1 &
  echo $! >"$dir/s3.pid"
  for _ in $(seq 1 100); do
    bun -e "await fetch('http://127.0.0.1:$s3_port/').then(() => process.exit(0), () => process.exit(1))" 2>/dev/null && break
    sleep 0.1
  done

  echo "export REGISTRY_MIRROR_TEST_DATABASE=postgres://postgres@127.0.0.1:$pg_port/postgres"
  echo "export REGISTRY_MIRROR_TEST_STORAGE=s3://$BUCKET"
  echo "export REGISTRY_MIRROR_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port"
  echo "export REGISTRY_MIRROR_TEST_S3_ACCESS_KEY_ID=S3RVER REGISTRY_MIRROR_TEST_S3_SECRET_ACCESS_KEY=S3RVER"
}

stop() {
  [ -f "$dir/pg/data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$dir/pg/data" -m fast -w stop >&2 || true
  [ -f "$dir/s3.pid" ] && kill "$(cat "$dir/s3.pid")" 2>/dev/null || true
  rm -rf "$dir"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
