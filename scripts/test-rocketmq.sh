#!/usr/bin/env bash
# A throwaway RocketMQ NameServer + one Broker for tests (real Java servers
# from the official artifacts, fetched once by scripts/install-rocketmq.sh).
#
#   scripts/test-rocketmq.sh start DIR
#       start a NameServer and a broker (cluster TestCluster, broker broker-a)
#       on 127.0.0.1 and free ports, data and logs under DIR; wait until the
#       NameServer lists the broker; print the NameServer address
#       127.0.0.1:PORT on stdout and write it to DIR/namesrv.
#       Exits 3 when Java or the jars are missing.
#   scripts/test-rocketmq.sh stop DIR
#       stop both by their pids (SIGTERM, SIGKILL after 3 s) and
#       delete the data; DIR/*.log and DIR/*-home/logs are kept for
#       post-mortems.
#   scripts/test-rocketmq.sh kill DIR
#       kill -9 the broker only, and wait until the NameServer dropped it.
#   scripts/test-rocketmq.sh restart DIR
#       start the broker again on the same ports with the same data.
#   scripts/test-rocketmq.sh start-b DIR
#       after `start`: a second broker, broker-b, in the same cluster on the
#       same NameServer (free ports, data under DIR/store-b, log
#       DIR/broker-b.log); print its address 127.0.0.1:PORT and write it to
#       DIR/broker-b.addr. `stop` stops it too.
#   scripts/test-rocketmq.sh freeze DIR [broker|broker-b]
#   scripts/test-rocketmq.sh thaw DIR [broker|broker-b]
#       SIGSTOP / SIGCONT the broker (default) or broker-b by its pid: a
#       frozen broker keeps its port (the kernel still accepts connections)
#       and answers nothing, like one in a long GC pause or a disk stall.
#
# ACL: with EC_TEST_ROCKETMQ_AUTH=USER:PASSWORD in the environment of
# `start`, the broker runs with RocketMQ 5's authentication and authorization
# enabled (ACL 2.0, users in the broker's RocksDB under DIR/store/config) and
# USER created at boot as its super user (initAuthenticationUser). Every
# request to it must then be signed with USER's credentials; the script signs
# its own (DIR/auth keeps them for `restart`). The NameServer checks nothing.
#
# The broker mirrors production's choices: autoCreateTopicEnable=false and
# autoCreateSubscriptionGroup=false (topics and groups are created explicitly,
# as `export-center rocketmq init` does), but with small heaps and small
# store files so it starts in a few seconds and fits in a few MB of disk.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLUSTER=TestCluster
BROKER_NAME=broker-a

die() { echo "test-rocketmq: $*" >&2; exit 1; }

# The JDK 17 module flags RocketMQ's store and Netty need (without them the
# broker fails on sun.nio.ch.DirectBuffer).
JAVA_MODULE_FLAGS=(
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED
)

java_bin() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then echo "$JAVA_HOME/bin/java"; return; fi
  command -v java >/dev/null || die "no java on PATH (Java 17 is needed)"
  command -v java
}

# Is pid $1 a live (not zombie) process?
alive() {
  [[ -r "/proc/$1/stat" ]] || return 1
  local state
  state="$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]).*/\1/' "/proc/$1/stat" 2>/dev/null || echo Z)"
  [[ "$state" != Z && "$state" != X ]]
}

# Free loopback ports: a NameServer port, a broker port P whose P-2 (the
# broker's "fast" channel) is free too, and an HA port. All are bound at once
# so they are distinct.
pick_ports() {
  python3 - <<'PY'
import socket
held = []
def bind(port=0):
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    held.append(s)
    return s.getsockname()[1]
namesrv = bind()
while True:
    p = bind()
    try:
        bind(p - 2)
        break
    except OSError:
        continue
ha = bind()
print(namesrv, p, ha)
PY
}

# remoting ADDR CODE [BODY]: one RocketMQ Remoting request (JSON header, see
# docs/rocketmq.md) to ADDR; prints the response header and body, exits 2 when
# ADDR does not answer. Python, so the script needs no client jar. With
# REMOTING_AUTH=USER:PASSWORD the request is signed as docs/rocketmq.md#acl
# says: AccessKey, then HMAC-SHA1 over the ext-field values in name order and
# the body.
remoting() {
  python3 - "$@" <<'PY'
import base64, hashlib, hmac, json, os, socket, struct, sys
host, port = sys.argv[1].split(":")
body = sys.argv[3].encode() if len(sys.argv) > 3 else b""
fields = {}
auth = os.environ.get("REMOTING_AUTH", "")
if auth:
    user, password = auth.split(":", 1)
    fields["AccessKey"] = user
    content = "".join(fields[k] for k in sorted(fields)).encode() + body
    fields["Signature"] = base64.b64encode(
        hmac.new(password.encode(), content, hashlib.sha1).digest()).decode()
header = json.dumps({"code": int(sys.argv[2]), "language": "OTHER", "version": 0,
                     "opaque": 1, "flag": 0, "extFields": fields}).encode()
try:
    s = socket.create_connection((host, int(port)), timeout=2)
    s.sendall(struct.pack(">II", 4 + len(header) + len(body), len(header)) + header + body)
    def recv(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                raise OSError("closed")
            b += c
        return b
    total, = struct.unpack(">I", recv(4))
    frame = recv(total)
except OSError:
    sys.exit(2)
sys.stdout.buffer.write(frame[4:] + b"\n")
PY
}

# namesrv_lists NAMESRV BROKER_ADDR [absent]: whether the NameServer's cluster
# info (GET_BROKER_CLUSTER_INFO, code 106) lists the broker address (or, with
# `absent`, does not); exit 2 when the NameServer does not answer.
namesrv_lists() {
  local out rc=0
  out="$(remoting "$1" 106)" || rc=$?
  [[ $rc == 0 ]] || return "$rc"
  if [[ "$out" == *"\"$2\""* ]]; then [[ "${3:-present}" == present ]]; else [[ "${3:-}" == absent ]]; fi
}

write_configs() {
  local dir="$1" nport="$2" bport="$3" hport="$4"
  cat >"$dir/namesrv.conf" <<EOF
listenPort=$nport
bindAddress=127.0.0.1
EOF
  write_broker_conf "$dir" "$dir/broker.conf" "$BROKER_NAME" "$dir/store" "$nport" "$bport" "$hport"
  echo "NAMESRV_PORT=$nport BROKER_PORT=$bport HA_PORT=$hport" >"$dir/ports"
}

# write_broker_conf DIR FILE NAME STORE NAMESRV_PORT BROKER_PORT HA_PORT
write_broker_conf() {
  local dir="$1" file="$2" name="$3" store="$4" nport="$5" bport="$6" hport="$7"
  cat >"$file" <<EOF
brokerClusterName=$CLUSTER
brokerName=$name
brokerId=0
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
brokerIP1=127.0.0.1
bindAddress=127.0.0.1
listenPort=$bport
haListenPort=$hport
namesrvAddr=127.0.0.1:$nport
storePathRootDir=$store
storePathCommitLog=$store/commitlog
# small store files: 16 MiB commit log segments, 30000-entry consume queues,
# a small message index; no timer wheel (delay levels use the schedule topic)
mappedFileSizeCommitLog=16777216
mappedFileSizeConsumeQueue=600000
maxHashSlotNum=10000
maxIndexNum=40000
timerWheelEnable=false
autoCreateTopicEnable=false
autoCreateSubscriptionGroup=false
# a shared 2-core test machine: let a send wait a little longer in the queue
waitTimeMillsInSendQueue=1000
# re-register soon when a NameServer restarted
registerNameServerPeriod=10000
EOF
  if [[ -n "${EC_TEST_ROCKETMQ_AUTH:-}" ]]; then
    local user="${EC_TEST_ROCKETMQ_AUTH%%:*}" password="${EC_TEST_ROCKETMQ_AUTH#*:}"
    [[ "$EC_TEST_ROCKETMQ_AUTH" == *:* && -n "$user" && -n "$password" ]] \
      || die "EC_TEST_ROCKETMQ_AUTH must be USER:PASSWORD"
    cat >>"$file" <<EOF
# ACL 2.0: every request is authenticated (signed with a user's password) and
# authorized (the user's ACLs; a super user may do anything)
authenticationEnabled=true
authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider
authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider
authorizationEnabled=true
authorizationProvider=org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider
authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider
initAuthenticationUser={"username":"$user","password":"$password"}
innerClientAuthenticationCredentials={"accessKey":"$user","secretKey":"$password"}
EOF
    echo "$EC_TEST_ROCKETMQ_AUTH" >"$dir/auth"
  else
    rm -f "$dir/auth"
  fi
}

# launch NAME MAIN_CLASS HEAP ARGS...: java in its own session, all output to
# DIR/NAME.log (truncated: a restart's readiness check must not see the last
# run's lines), pid to DIR/NAME.pid.
launch() {
  local dir="$1" name="$2" main="$3" heap="$4"
  shift 4
  : >"$dir/$name.log"
  mkdir -p "$dir/$name-home"
  # user.home decides where RocketMQ writes its logs
  # (DIR/NAME-home/logs/rocketmqlogs) and the NameServer its kv config.
  setsid "$(java_bin)" -Xms"$heap" -Xmx"$heap" -XX:MaxDirectMemorySize=256m \
    -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true \
    -Duser.home="$dir/$name-home" -Drocketmq.home.dir="$dir" "${JAVA_MODULE_FLAGS[@]}" \
    -cp "$LIB/*" "$main" "$@" </dev/null >>"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
}

# Waits until the broker's boot line is in its log and the NameServer lists
# it; fails (with the log tail) when the broker dies or 60 s pass.
#
# A booted broker registers with the NameServer only 10 s later: its first
# attempt, at the end of start-up, runs before its client has found the
# NameServer reachable and is skipped. Re-asserting brokerPermission=6
# (read+write, what it already has) with UPDATE_BROKER_CONFIG (code 25) makes
# it register at once.
wait_broker_registered() {
  local dir="$1" namesrv="$2" addr="$3" name="${4:-broker}" pid nudged=0
  pid="$(cat "$dir/$name.pid")"
  for _ in $(seq 600); do
    alive "$pid" || { tail -n 30 "$dir/$name.log" >&2; return 1; }
    if grep -q 'boot success' "$dir/$name.log"; then
      namesrv_lists "$namesrv" "$addr" && return 0
      if ((nudged % 10 == 0)); then
        REMOTING_AUTH="$(cat "$dir/auth" 2>/dev/null || true)" \
          remoting "$addr" 25 "brokerPermission=6" >/dev/null || true
      fi
      nudged=$((nudged + 1))
    fi
    sleep 0.1
  done
  tail -n 30 "$dir/$name.log" >&2
  return 1
}

wait_namesrv_up() {
  local dir="$1" namesrv="$2" pid
  pid="$(cat "$dir/namesrv.pid")"
  for _ in $(seq 600); do
    alive "$pid" || { tail -n 30 "$dir/namesrv.log" >&2; return 1; }
    remoting "$namesrv" 106 >/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# Sends SIGTERM, waits up to $2 seconds, then SIGKILL; waits until gone.
stop_pid() {
  local pid="$1" grace="$2"
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $((grace * 10))); do
    alive "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    alive "$pid" || return 0
    sleep 0.1
  done
}

stop_pidfile() {
  [[ -f "$1" ]] || return 0
  stop_pid "$(cat "$1")" "$2"
}

load_ports() {
  local dir="$1"
  [[ -f "$dir/ports" ]] || die "no $dir/ports: was the broker started with 'start $dir'?"
  # shellcheck disable=SC1091
  eval "$(cat "$dir/ports")"
}

start() {
  local dir="$1"
  [[ -n "$dir" ]] || die "usage: $0 start DIR"
  [[ ! -e "$dir/namesrv.pid" ]] || die "$dir already has a running NameServer (stop it first)"
  # Exit status 3: no Java or no jars (an environment problem, not a failure
  # of the servers).
  LIB="$("$here/install-rocketmq.sh")/lib" || exit 3
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local attempt nport bport hport
  for attempt in 1 2 3; do
    read -r nport bport hport < <(pick_ports)
    write_configs "$dir" "$nport" "$bport" "$hport"
    # One after the other: the broker registers with the NameServer once at
    # the end of its start and then only every registerNameServerPeriod, so
    # a broker that boots before the NameServer listens would cost 10 s.
    launch "$dir" namesrv org.apache.rocketmq.namesrv.NamesrvStartup 128m -c "$dir/namesrv.conf"
    if wait_namesrv_up "$dir" "127.0.0.1:$nport" &&
      launch "$dir" broker org.apache.rocketmq.broker.BrokerStartup 256m -c "$dir/broker.conf" &&
      wait_broker_registered "$dir" "127.0.0.1:$nport" "127.0.0.1:$bport"; then
      echo "127.0.0.1:$nport" | tee "$dir/namesrv"
      return 0
    fi
    stop_pidfile "$dir/broker.pid" 2
    stop_pidfile "$dir/namesrv.pid" 2
    rm -rf "$dir/namesrv.pid" "$dir/broker.pid" "$dir/store"
  done
  die "the NameServer or the broker did not start; see $dir/namesrv.log, $dir/broker.log, $dir/*-home/logs"
}

stop() {
  local dir="$1"
  [[ -n "$dir" ]] || die "usage: $0 stop DIR"
  [[ -f "$dir/namesrv.pid" ]] || die "no $dir/namesrv.pid"
  # A frozen broker would not act on SIGTERM: thaw both first.
  signal_pidfile CONT "$dir/broker.pid"
  signal_pidfile CONT "$dir/broker-b.pid"
  # All at once, with a short grace: the broker's orderly shutdown takes
  # about 10 s, and its data is deleted right after anyway.
  stop_pidfile "$dir/broker.pid" 3 &
  stop_pidfile "$dir/broker-b.pid" 3 &
  stop_pidfile "$dir/namesrv.pid" 3 &
  wait
  rm -rf "$dir/store" "$dir/store-b" "$dir/namesrv" "$dir/namesrv.pid" "$dir/broker.pid" \
    "$dir/broker-b.pid" "$dir/broker-b.addr" "$dir/namesrv-home/namesrv"
}

# signal_pidfile SIGNAL PIDFILE: signals the live process of PIDFILE, if any.
signal_pidfile() {
  [[ -f "$2" ]] || return 0
  local pid
  pid="$(cat "$2")"
  if alive "$pid"; then kill -"$1" "$pid" 2>/dev/null || true; fi
}

start_b() {
  local dir="$1" bport hport
  [[ -n "$dir" ]] || die "usage: $0 start-b DIR"
  dir="$(cd "$dir" && pwd)"
  [[ -f "$dir/namesrv.pid" ]] || die "no NameServer in $dir: run 'start $dir' first"
  [[ ! -e "$dir/broker-b.pid" ]] || die "$dir already has a broker-b"
  load_ports "$dir"
  # The same ACL as the first broker (write_broker_conf reads it from the env).
  if [[ -f "$dir/auth" ]]; then EC_TEST_ROCKETMQ_AUTH="$(cat "$dir/auth")"; else EC_TEST_ROCKETMQ_AUTH=; fi
  LIB="$("$here/install-rocketmq.sh")/lib" || exit 3
  local attempt
  for attempt in 1 2 3; do
    read -r _ bport hport < <(pick_ports)
    write_broker_conf "$dir" "$dir/broker-b.conf" broker-b "$dir/store-b" "$NAMESRV_PORT" \
      "$bport" "$hport"
    launch "$dir" broker-b org.apache.rocketmq.broker.BrokerStartup 256m -c "$dir/broker-b.conf"
    if wait_broker_registered "$dir" "127.0.0.1:$NAMESRV_PORT" "127.0.0.1:$bport" broker-b; then
      echo "127.0.0.1:$bport" | tee "$dir/broker-b.addr"
      return 0
    fi
    stop_pidfile "$dir/broker-b.pid" 2
    rm -rf "$dir/broker-b.pid" "$dir/store-b"
  done
  die "broker-b did not start; see $dir/broker-b.log"
}

# freeze_or_thaw STOP|CONT DIR [broker|broker-b]
freeze_or_thaw() {
  local signal="$1" dir="$2" name="${3:-broker}"
  [[ -n "$dir" ]] || die "usage: $0 freeze|thaw DIR [broker|broker-b]"
  [[ "$name" == broker || "$name" == broker-b ]] || die "no such broker: $name"
  [[ -f "$dir/$name.pid" ]] || die "no $dir/$name.pid ($name not running?)"
  alive "$(cat "$dir/$name.pid")" || die "$name of $dir is not running"
  kill -"$signal" "$(cat "$dir/$name.pid")"
}

kill_broker() {
  local dir="$1" pid
  [[ -n "$dir" ]] || die "usage: $0 kill DIR"
  [[ -f "$dir/broker.pid" ]] || die "no $dir/broker.pid (broker not running?)"
  load_ports "$dir"
  pid="$(cat "$dir/broker.pid")"
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    alive "$pid" || break
    sleep 0.05
  done
  rm -f "$dir/broker.pid"
  # The NameServer drops a broker when its connection closes; wait for that so
  # a later `restart` cannot mistake the old registration for the new one.
  for _ in $(seq 100); do
    namesrv_lists "127.0.0.1:$NAMESRV_PORT" "127.0.0.1:$BROKER_PORT" absent && return 0
    sleep 0.1
  done
}

restart() {
  local dir="$1"
  [[ -n "$dir" ]] || die "usage: $0 restart DIR"
  dir="$(cd "$dir" && pwd)"
  [[ ! -f "$dir/broker.pid" ]] || ! alive "$(cat "$dir/broker.pid")" \
    || die "the broker of $dir is still running"
  load_ports "$dir"
  LIB="$("$here/install-rocketmq.sh")/lib"
  # The old listening sockets may linger for a moment after kill -9.
  for _ in 1 2 3 4 5; do
    launch "$dir" broker org.apache.rocketmq.broker.BrokerStartup 256m -c "$dir/broker.conf"
    if wait_broker_registered "$dir" "127.0.0.1:$NAMESRV_PORT" "127.0.0.1:$BROKER_PORT"; then
      return 0
    fi
    stop_pidfile "$dir/broker.pid" 2
    sleep 1
  done
  rm -f "$dir/broker.pid"
  die "the broker did not restart; see $dir/broker.log"
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  kill) kill_broker "${2:-}" ;;
  restart) restart "${2:-}" ;;
  start-b) start_b "${2:-}" ;;
  freeze) freeze_or_thaw STOP "${2:-}" "${3:-}" ;;
  thaw) freeze_or_thaw CONT "${2:-}" "${3:-}" ;;
  *) die "usage: $0 start DIR | stop DIR | kill DIR | restart DIR | start-b DIR | freeze|thaw DIR [broker|broker-b]" ;;
esac
