#!/usr/bin/env bash
# Fetches S3Proxy, the S3-compatible server the tests run (scripts/test-s3.sh):
# a real server with a file-system backend that speaks SigV4, multipart
# upload, ListMultipartUploads, AbortMultipartUpload, ranged GET and presigned
# URLs (docs/storage.md#tests). One self-contained jar from Maven Central,
# fetched with mvn (whose default repository is Maven Central) into
# ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/s3proxy/. Idempotent:
# does nothing when the jar is there. Needs java (17) and mvn (install-deps.sh).
set -euo pipefail

VERSION=2.6.0
ARTIFACT="org.gaul:s3proxy:${VERSION}:jar:jar-with-dependencies"
DEPS_DIR="${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}"
DIR="$DEPS_DIR/s3proxy"
JAR="$DIR/s3proxy-${VERSION}-jar-with-dependencies.jar"

die() { echo "install-s3proxy: $*" >&2; exit 1; }

if [[ "${1:-}" == "--print-jar" ]]; then echo "$JAR"; exit 0; fi
if [[ -s "$JAR" ]]; then
  echo "install-s3proxy: $JAR present"
  exit 0
fi
command -v mvn >/dev/null || die "mvn not found (scripts/install-deps.sh installs maven)"
command -v java >/dev/null || die "java not found (scripts/install-deps.sh installs a JRE)"
mkdir -p "$DIR"
tmp="$(mktemp -d "$DIR/.fetch-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "install-s3proxy: fetching $ARTIFACT"
mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$ARTIFACT" -DoutputDirectory="$tmp" \
  || die "mvn could not fetch $ARTIFACT"
[[ -s "$tmp/$(basename "$JAR")" ]] || die "mvn fetched no $(basename "$JAR")"
mv "$tmp/$(basename "$JAR")" "$JAR"  # atomic: a concurrent run never sees half a jar
echo "install-s3proxy: $JAR"
