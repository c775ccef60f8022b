#!/usr/bin/env bash
# A throwaway MariaDB server for shell/python end-to-end tests.
#
#   scripts/test-mariadb.sh start DIR [DBNAME]
#       mariadb-install-db in DIR/data, start mariadbd on 127.0.0.1 and a free
#       port (socket in DIR), create DBNAME (default export_center, utf8mb4),
#       print the URL mysql://root@127.0.0.1:PORT/DBNAME on stdout and write it
#       to DIR/url; mariadbd writes its pid to DIR/mariadb.pid.
#   scripts/test-mariadb.sh stop DIR
#       stop that server by its pid (SIGTERM, SIGKILL after 30 s) and delete
#       DIR/data; DIR/mariadb.log is kept for post-mortems.
#
# Run as root, the server runs as user mysql (mariadbd refuses to run as root;
# DIR is chown'ed to mysql, so every parent of DIR must be traversable by that
# user: /tmp works). Root logs in without a password over TCP: for tests only.
# EXPORT_CENTER_MARIADB_SERVER_OPTIONS adds server options, later ones winning
# (e.g. "--innodb-buffer-pool-size=512M" for a benchmark's replica).
# EXPORT_CENTER_TEST_DB_CLOCK_RATE=N: this script runs under libfaketime with the clock N
# times faster (tests/integration/fake_clock_db.py), so the wait for the server is N times
# as many polls.
set -euo pipefail

die() { echo "test-mariadb: $*" >&2; exit 1; }

INSTALL_DB=/usr/bin/mariadb-install-db
SERVER=/usr/sbin/mariadbd
CLIENT=/usr/bin/mariadb

free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    echo $((20000 + RANDOM % 30000))
  fi
}

# Runs a command as the server's user.
as_mysql() {
  if [[ "$(id -u)" == 0 ]]; then runuser -u mysql -- "$@"; else "$@"; fi
}

# Waits until the server on $1 answers; fails early when the server pid $2 died.
wait_ready() {
  local port="$1" dir="$2" pid=""
  for _ in $(seq $((600 * ${EXPORT_CENTER_TEST_DB_CLOCK_RATE:-1}))); do
    if "$CLIENT" --no-defaults --protocol=tcp -h 127.0.0.1 -P "$port" -u root \
        -e "SELECT 1" >/dev/null 2>&1; then
      return 0
    fi
    [[ -z "$pid" && -s "$dir/mariadb.pid" ]] && pid="$(cat "$dir/mariadb.pid")"
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.1
  done
  return 1
}

start() {
  local dir="$1" db="${2:-export_center}" port
  [[ -n "$dir" ]] || die "usage: $0 start DIR [DBNAME]"
  [[ "$db" =~ ^[A-Za-z0-9_]+$ ]] || die "database name must be [A-Za-z0-9_]+"
  [[ ! -e "$dir/mariadb.pid" ]] || die "$dir already has a running server (stop it first)"
  [[ -x "$SERVER" && -x "$INSTALL_DB" ]] || die "no MariaDB server binaries ($SERVER, $INSTALL_DB)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  touch "$dir/mariadb.log"
  [[ "$(id -u)" != 0 ]] || chown mysql: "$dir" "$dir/mariadb.log"
  as_mysql "$INSTALL_DB" --no-defaults --datadir="$dir/data" \
    --auth-root-authentication-method=normal --skip-test-db >>"$dir/mariadb.log" 2>&1 \
    || die "mariadb-install-db failed; see $dir/mariadb.log"
  for _ in 1 2 3; do
    port="$(free_port)"
    rm -f "$dir/mariadb.pid"
    # mariadbd stays in the foreground; run it in the background with its own
    # pid file (runuser's pid is not the server's).
    as_mysql "$SERVER" --no-defaults --datadir="$dir/data" --socket="$dir/mariadb.sock" \
      --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/mariadb.pid" \
      --log-error="$dir/mariadb.log" --skip-log-bin --innodb-flush-log-at-trx-commit=0 \
      --innodb-buffer-pool-size=64M --max-connections=300 ${EXPORT_CENTER_MARIADB_SERVER_OPTIONS:-} \
      </dev/null >/dev/null 2>&1 &
    if wait_ready "$port" "$dir"; then
      "$CLIENT" --no-defaults --protocol=tcp -h 127.0.0.1 -P "$port" -u root \
        -e "CREATE DATABASE \`$db\` CHARACTER SET utf8mb4" \
        || die "CREATE DATABASE $db failed"
      echo "mysql://root@127.0.0.1:$port/$db" | tee "$dir/url"
      return 0
    fi
    # Not ready: stop what may still run, then try another port (a port picked
    # as free can be taken before the server binds it).
    if [[ -s "$dir/mariadb.pid" ]]; then kill -KILL "$(cat "$dir/mariadb.pid")" 2>/dev/null || true; fi
    wait "$!" 2>/dev/null || true
  done
  die "mariadbd did not start; see $dir/mariadb.log"
}

stop() {
  local dir="$1" pid
  [[ -n "$dir" ]] || die "usage: $0 stop DIR"
  [[ -f "$dir/mariadb.pid" ]] || die "no $dir/mariadb.pid"
  pid="$(cat "$dir/mariadb.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 300); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  fi
  rm -rf "$dir/data" "$dir/mariadb.pid" "$dir/mariadb.sock" "$dir/url"
}

case "${1:-}" in
  start) start "${2:-}" "${3:-}" ;;
  stop) stop "${2:-}" ;;
  *) die "usage: $0 start DIR [DBNAME] | stop DIR" ;;
esac
