#!/usr/bin/env bash
# A throwaway PostgreSQL server for shell/python end-to-end tests.
#
#   scripts/test-postgres.sh start DIR [DBNAME]
#       initdb in DIR/data, start postgres on 127.0.0.1 and a free port
#       (sockets in DIR), create DBNAME (default export_center), print the URL
#       on stdout and write it to DIR/url; the server pid goes to DIR/postgres.pid.
#   scripts/test-postgres.sh stop DIR
#       stop that server by its pid (fast shutdown, SIGKILL after 30 s) and
#       delete DIR/data; DIR/postgres.log is kept for post-mortems.
#
# Run as root, the server runs as user postgres (DIR is chown'ed to it, so
# every parent of DIR must be traversable by that user: /tmp works).
# EXPORT_CENTER_PG_SERVER_OPTIONS adds server options (e.g. "-c shared_buffers=512MB").
# EXPORT_CENTER_TEST_DB_CLOCK_RATE=N: this script runs under libfaketime with the clock N
# times faster (tests/integration/fake_clock_db.py), so pg_ctl's wait is N times as long.
set -euo pipefail

die() { echo "test-postgres: $*" >&2; exit 1; }

bindir() {
  local dir
  dir="$(pg_config --bindir 2>/dev/null || true)"
  if [[ -n "$dir" && -x "$dir/postgres" && -x "$dir/initdb" ]]; then echo "$dir"; return; fi
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  [[ -n "$dir" && -x "$dir/postgres" ]] || die "no PostgreSQL server binaries found"
  echo "$dir"
}

free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    echo $((20000 + RANDOM % 30000))
  fi
}

# Runs a command as the server's user.
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local dir="$1" db="${2:-export_center}" bin port
  [[ -n "$dir" ]] || die "usage: $0 start DIR [DBNAME]"
  [[ ! -e "$dir/postgres.pid" ]] || die "$dir already has a running server (stop it first)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  touch "$dir/postgres.log"
  [[ "$(id -u)" != 0 ]] || chown postgres: "$dir" "$dir/postgres.log"
  bin="$(bindir)"
  local wait_seconds=$((60 * ${EXPORT_CENTER_TEST_DB_CLOCK_RATE:-1}))
  as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
    >>"$dir/postgres.log" 2>&1 || die "initdb failed; see $dir/postgres.log"
  for _ in 1 2 3; do
    port="$(free_port)"
    if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t "$wait_seconds" \
        -o "-k $dir -c listen_addresses=127.0.0.1 -p $port -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 ${EXPORT_CENTER_PG_SERVER_OPTIONS:-}" \
        start >/dev/null; then
      head -n 1 "$dir/data/postmaster.pid" >"$dir/postgres.pid"
      as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db" \
        || die "createdb $db failed"
      echo "postgresql://postgres@127.0.0.1:$port/$db" | tee "$dir/url"
      return 0
    fi
  done
  die "postgres did not start; see $dir/postgres.log"
}

stop() {
  local dir="$1" pid
  [[ -n "$dir" ]] || die "usage: $0 stop DIR"
  [[ -f "$dir/postgres.pid" ]] || die "no $dir/postgres.pid"
  pid="$(cat "$dir/postgres.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid"  # fast shutdown
    for _ in $(seq 300); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  fi
  rm -rf "$dir/data" "$dir/postgres.pid" "$dir/url"
}

case "${1:-}" in
  start) start "${2:-}" "${3:-}" ;;
  stop) stop "${2:-}" ;;
  *) die "usage: $0 start DIR [DBNAME] | stop DIR" ;;
esac
