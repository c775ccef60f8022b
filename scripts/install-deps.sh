#!/usr/bin/env bash
# Installs the Debian packages export-center needs, and the test tools that come
# from package registries. Idempotent: asks apt-get only for packages that are
# not installed yet, and each tool script does nothing when its cache is complete.
#
#   install-deps.sh          # everything: build, run, and every test (scripts/test.sh)
#   install-deps.sh --demo   # only what building and running the demo needs (scripts/demo.sh)
#
# The demo profile exists because a newcomer waits for it: the test tools below
# (a browser, LibreOffice, clang, database servers, a broker) are most of the
# download and none of the demo.
set -euo pipefail

profile=test
case "${1:-}" in
  --demo) profile=demo ;;
  "") ;;
  *) echo "usage: install-deps.sh [--demo]" >&2; exit 2 ;;
esac

# Building the center, its sample service and the demo's run (SQLite, local files).
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  nlohmann-json3-dev libsimdjson-dev libcpp-httplib-dev libboost1.81-dev libsqlite3-dev sqlite3
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libssl-dev zlib1g-dev
  libzip-dev libcctz-dev tzdata prometheus-cpp-dev libpugixml-dev
  # JWS verification and JWK import of the token verifier (docs/http-api.md#jose-library);
  # cjose.pc requires jansson.pc, which Debian packages apart (without it CMake finds no cjose)
  libcjose-dev libjansson-dev
  # e-mail delivery over SMTP with STARTTLS and AUTH (src/notify/mail/curl_mail_sender.h)
  libcurl4-openssl-dev
)
# Everything else the test command uses.
TEST_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev libxlsxwriter-dev  # tests; the benchmarks (libxlsxwriter: the writer's baseline)
  libpq-dev libmariadb-dev  # the PostgreSQL and MySQL backends (the demo builds without them)
  openssl  # the test CA and certificates of the MariaDB TLS tests (tests/support/mariadb_server.cc)
  postgresql mariadb-server mariadb-client python3 python3-openpyxl python3-yaml libfaketime curl procps unzip wrk libreoffice-calc-nogui
  prometheus  # promtool checks deploy/prometheus/*.rules.yml (tests/deploy)
  dpkg-dev adduser systemd  # scripts/package.sh (dpkg-shlibdeps) and the package test (tests/deploy: systemd-analyze verify)
  # scripts/check-thread-safety.sh and scripts/check-format.sh (pinned to release 14)
  clang-14 clang-format-14
  # the Java SDK, its sample service and the MyBatis conformance test (scripts/build-java.sh);
  # the JDK also runs the RocketMQ broker and S3Proxy of the tests, Maven fetches them
  openjdk-17-jdk-headless maven
  libclang-rt-14-dev  # libFuzzer + ASan runtime of the fuzz targets (docs/fuzzing.md)
  python3-pip  # installs the pinned Python test tools (scripts/install-pinned-python.sh)
  python3-uno  # LibreOffice opens a password-protected XLSX with its password (tests/render/lo_open_encrypted.py)
  p7zip-full  # 7-Zip opens the AES zip of a password-protected CSV (tests/render/encrypted_writers_test.cc)
  # the download-center page's browser tests: playwright-core (npm, scripts/install-node-tools.sh)
  # drives Debian's headless chromium; Noto CJK renders the Chinese page
  chromium fonts-noto-cjk nodejs  # node >= 20 for playwright-core; its npm comes with it
)
PACKAGES=("${BUILD_PACKAGES[@]}")
if [ "$profile" = test ]; then PACKAGES+=("${TEST_PACKAGES[@]}"); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
if [ "$profile" = demo ]; then exit 0; fi

# Test servers that come from a package registry rather than Debian, fetched once with
# Maven into ${EXPORT_CENTER_DEPS_DIR:-/var/cache/export-center} (idempotent): the RocketMQ
# broker and S3Proxy.
"$(dirname "${BASH_SOURCE[0]}")/install-rocketmq.sh" >/dev/null
"$(dirname "${BASH_SOURCE[0]}")/install-s3proxy.sh"
# The pinned OpenAPI validator of tests/integration/openapi_test.py, with pip (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-openapi-validator.sh" >/dev/null
# The pinned token minter (PyJWT) of tests/integration/jwks_auth_test.py (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-jwt-minter.sh" >/dev/null
# The pinned readers of password-protected files of tests/render/read_encrypted.py (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-file-decrypters.sh" >/dev/null
# The pinned second XLSX reader (python-calamine) of tests/integration/rich_columns_test.py (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-calamine.sh" >/dev/null
# The pinned SMTP server (aiosmtpd) of tests/notify/mail_*_test.cc (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-smtp-server.sh" >/dev/null
# The pinned property-based API tester of tests/integration/api_fuzz_test.py (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-api-fuzzer.sh" >/dev/null
# playwright-core for the browser tests, with npm into the same folder (idempotent).
"$(dirname "${BASH_SOURCE[0]}")/install-node-tools.sh"
