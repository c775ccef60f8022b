#!/usr/bin/env bash
# Fetches the official RocketMQ NameServer + Broker jars (and their
# dependencies) with Maven, once, into
#   ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/rocketmq-<version>/lib
# for the throwaway test broker of scripts/test-rocketmq.sh. Idempotent: a
# complete copy (marked by .complete) is left alone. Prints the directory.
#
# 5.3.3 runs on JDK 17 with the --add-opens flags test-rocketmq.sh passes; the
# client of this project speaks the Remoting protocol, which 5.x brokers serve
# unchanged (docs/rocketmq.md).
set -euo pipefail

VERSION="${ROCKETMQ_VERSION:-5.3.3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deps="${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}"
dest="$deps/rocketmq-$VERSION"

die() { echo "install-rocketmq: $*" >&2; exit 1; }

if [[ -f "$dest/.complete" ]]; then
  echo "$dest"
  exit 0
fi
command -v java >/dev/null || die "no java on PATH (Java 17 is needed)"
command -v mvn >/dev/null || die "no mvn on PATH"

mkdir -p "$deps"
staging="$(mktemp -d "$deps/.rocketmq-$VERSION.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
chmod 755 "$staging"
echo "install-rocketmq: fetching RocketMQ $VERSION into $dest" >&2
mvn -q -B -Dstyle.color=never -f "$here/rocketmq/pom.xml" -Drocketmq.version="$VERSION" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$staging/lib" >&2 \
  || die "mvn could not fetch RocketMQ $VERSION"
ls "$staging/lib"/rocketmq-broker-*.jar "$staging/lib"/rocketmq-namesrv-*.jar >/dev/null \
  || die "the broker or namesrv jar is missing after mvn"
touch "$staging/.complete"
rm -rf "$dest"
mv "$staging" "$dest"
trap - EXIT
echo "$dest"
