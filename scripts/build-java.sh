#!/usr/bin/env bash
# Builds the Java side with Maven (scripts/mvn.sh: offline once the project's
# local repository under ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center}/m2
# holds the dependencies): the SDK modules of sdk-java/ (installed into that
# repository, as a team's build would consume them), the sample service
# examples/order-service-java/ (target/order-service-java.jar) and the MyBatis
# conformance test's classes. Tests run from CTest (tests/sdk, tests/source).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v java >/dev/null || { echo "build-java: java not found (scripts/install-deps.sh)" >&2; exit 1; }
./scripts/mvn.sh -q -f sdk-java/pom.xml install -DskipTests
echo "build-java: sdk-java and examples/order-service-java/target/order-service-java.jar built"
