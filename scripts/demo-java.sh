#!/usr/bin/env bash
# The demo with the Java sample service: like scripts/demo.sh, but the center
# exports from examples/order-service-java (Spring Boot + MyBatis on the
# export-center starter), which `export-center demo` builds with Maven and
# starts because config/demo-java.yaml has an order-service: section.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
exec ./build/export-center demo --config config/demo-java.yaml
