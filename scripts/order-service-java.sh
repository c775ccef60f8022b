#!/usr/bin/env bash
# Builds (if needed) and starts the Java sample service:
#   scripts/order-service-java.sh --config config/demo-java.yaml
# `export-center demo` runs this for a config with an order-service: section.
# Maven's output goes to stderr, so the service's first stdout line is its
# "listening on" line. The working directory is kept: relative paths in the
# config mean the same to the service and to the center.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JAR="$ROOT/examples/order-service-java/target/order-service-java.jar"
newest_source="$(find "$ROOT/sdk-java" "$ROOT/examples/order-service-java" \
  \( -name target -prune \) -o -type f \( -name '*.java' -o -name '*.xml' -o -name '*.yaml' \
  -o -name '*.imports' \) -newer "$JAR" -print -quit 2>/dev/null || true)"
if [[ ! -s "$JAR" || -n "$newest_source" ]]; then
  echo "order-service-java: building with Maven (the first build fetches dependencies)..." >&2
  "$ROOT/scripts/build-java.sh" >&2
fi
exec java -jar "$JAR" "$@"
