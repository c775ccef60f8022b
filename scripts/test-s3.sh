#!/usr/bin/env bash
# A throwaway S3-compatible server (S3Proxy, file-system backend) for tests.
#
#   scripts/test-s3.sh start DIR
#       start S3Proxy on 127.0.0.1 and a free port with one bucket and a
#       key pair, objects under DIR/data; write DIR/s3.env with lines
#       EXPORT_CENTER_S3_ENDPOINT=, _BUCKET=, _REGION=, _ACCESS_KEY=,
#       _SECRET_KEY= (and print it); the server pid goes to DIR/s3proxy.pid.
#       Started again after a stop, it keeps the port, keys and objects.
#   scripts/test-s3.sh start DIR --tls
#       the same over https only: a CA made here with the openssl CLI
#       (DIR/tls/ca.pem) signs the server's certificate for 127.0.0.1 and
#       localhost, and a second CA that signs nothing (DIR/tls/other-ca.pem)
#       is there to be refused; s3.env adds EXPORT_CENTER_S3_CA_CERT_FILE and
#       EXPORT_CENTER_S3_OTHER_CA_CERT_FILE (docs/storage.md#tls).
#   scripts/test-s3.sh stop DIR
#       stop that server by its pid (SIGTERM, SIGKILL after 15 s); DIR and
#       its objects stay (delete DIR when done); DIR/s3proxy.log is kept.
#
# The jar comes from scripts/install-s3proxy.sh (run by install-deps.sh).
set -euo pipefail

die() { echo "test-s3: $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

answers() {  # any HTTP answer (S3Proxy says 403 to an anonymous GET /); $2: a CA file
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 ${2:+--cacert "$2"} "$1/" || true)"
  [[ "$code" != "000" && -n "$code" ]]
}

# A CA, a server certificate it signs for 127.0.0.1 and localhost, the
# server's PKCS12 keystore, and a second CA that signs nothing; kept across a
# restart.
make_tls() {
  local tls="$1/tls"
  [[ -s "$tls/keystore.p12" ]] && return 0
  command -v openssl >/dev/null || die "openssl not found"
  mkdir -p "$tls"
  for ca in ca other-ca; do
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=export-center test $ca" \
      -keyout "$tls/$ca.key" -out "$tls/$ca.pem" 2>/dev/null
  done
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
    -CAcreateserial -days 2 -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
  openssl pkcs12 -export -in "$tls/server.pem" -inkey "$tls/server.key" -name s3proxy \
    -passout pass:export-center -out "$tls/keystore.p12"
}

start() {
  local dir="$1" tls="${2:-}" jar port bucket region access secret endpoint pid scheme ca=""
  [[ -n "$dir" ]] || die "usage: $0 start DIR [--tls]"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/s3proxy.pid" ]] && kill -0 "$(cat "$dir/s3proxy.pid")" 2>/dev/null; then
    die "$dir already has a running server (stop it first)"
  fi
  jar="$("$(dirname "$0")/install-s3proxy.sh" --print-jar)"
  [[ -s "$jar" ]] || die "no S3Proxy jar at $jar; run scripts/install-s3proxy.sh"
  command -v java >/dev/null || die "java not found"
  if [[ -f "$dir/s3.env" ]]; then  # a restart: same port, keys and objects
    # shellcheck disable=SC1091
    source "$dir/s3.env"
    endpoint="$EXPORT_CENTER_S3_ENDPOINT" bucket="$EXPORT_CENTER_S3_BUCKET"
    region="$EXPORT_CENTER_S3_REGION" access="$EXPORT_CENTER_S3_ACCESS_KEY"
    secret="$EXPORT_CENTER_S3_SECRET_KEY"
  else
    port="$(free_port)"
    scheme="http"
    [[ "$tls" == "--tls" ]] && scheme="https"
    endpoint="$scheme://127.0.0.1:$port" bucket="export-center-test" region="us-east-1"
    access="ec-test-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    secret="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  fi
  # The file-system backend keeps a bucket as a folder under its base dir.
  mkdir -p "$dir/data/$bucket"
  if [[ "$endpoint" == https://* ]]; then
    make_tls "$dir"
    ca="$dir/tls/ca.pem"
    cat >"$dir/s3proxy.conf" <<CONF
s3proxy.secure-endpoint=$endpoint
s3proxy.keystore-path=$dir/tls/keystore.p12
s3proxy.keystore-password=export-center
CONF
  else
    echo "s3proxy.endpoint=$endpoint" >"$dir/s3proxy.conf"
  fi
  cat >>"$dir/s3proxy.conf" <<CONF
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$access
s3proxy.credential=$secret
jclouds.provider=filesystem
jclouds.filesystem.basedir=$dir/data
CONF
  java -Xmx512m -jar "$jar" --properties "$dir/s3proxy.conf" >>"$dir/s3proxy.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/s3proxy.pid"
  for _ in $(seq 600); do
    if answers "$endpoint" "$ca"; then
      cat >"$dir/s3.env.tmp" <<ENV
EXPORT_CENTER_S3_ENDPOINT=$endpoint
EXPORT_CENTER_S3_BUCKET=$bucket
EXPORT_CENTER_S3_REGION=$region
EXPORT_CENTER_S3_ACCESS_KEY=$access
EXPORT_CENTER_S3_SECRET_KEY=$secret
ENV
      if [[ -n "$ca" ]]; then
        echo "EXPORT_CENTER_S3_CA_CERT_FILE=$ca" >>"$dir/s3.env.tmp"
        echo "EXPORT_CENTER_S3_OTHER_CA_CERT_FILE=$dir/tls/other-ca.pem" >>"$dir/s3.env.tmp"
      fi
      mv "$dir/s3.env.tmp" "$dir/s3.env"
      cat "$dir/s3.env"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || die "S3Proxy exited during start-up; see $dir/s3proxy.log"
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  die "S3Proxy did not answer within 60 s; see $dir/s3proxy.log"
}

stop() {
  local dir="$1" pid
  [[ -n "$dir" ]] || die "usage: $0 stop DIR"
  [[ -f "$dir/s3proxy.pid" ]] || die "no $dir/s3proxy.pid"
  pid="$(cat "$dir/s3proxy.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  fi
  rm -f "$dir/s3proxy.pid"
}

case "${1:-}" in
  start) start "${2:-}" "${3:-}" ;;
  stop) stop "${2:-}" ;;
  *) die "usage: $0 start DIR [--tls] | stop DIR" ;;
esac
