#!/usr/bin/env bash
# Maven for this repository: batch mode, the project's own local repository
# under ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/m2, and offline
# whenever that repository already holds what the build needs. Only when an
# offline run fails for want of an artifact does it run once more online
# (Maven's default repository), which fills the cache for every later run.
#   scripts/mvn.sh -f sdk-java/pom.xml install -DskipTests
set -euo pipefail
DEPS_DIR="${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}"
REPO="$DEPS_DIR/m2"
mkdir -p "$REPO"
command -v mvn >/dev/null || { echo "mvn.sh: mvn not found (scripts/install-deps.sh installs maven)" >&2; exit 1; }
common=(-B -Dstyle.color=never -Dmaven.repo.local="$REPO" -Dorg.slf4j.simpleLogger.log.org.apache.maven.cli.transfer.Slf4jMavenTransferListener=warn)

# Debian's Maven 3.8 prints colour resets even in batch mode; logs stay plain.
plain() { sed 's/\x1b\[[0-9;]*m//g'; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if mvn -o "${common[@]}" "$@" >"$log" 2>&1; then
  plain <"$log"
  exit 0
fi
# Missing artifacts say so in Maven's own words; anything else is a real
# failure (a compile error, a failed test) and is not retried.
if grep -qE "offline mode|has not been downloaded from it before|Cannot access .* in offline|were not found in the local repository|is not available in offline" "$log"; then
  echo "mvn.sh: the local repository lacks artifacts; fetching them once" >&2
  set -o pipefail
  mvn "${common[@]}" "$@" 2>&1 | plain
  exit $?
fi
plain <"$log"
exit 1
