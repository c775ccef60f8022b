#!/usr/bin/env bash
# Runs clang's thread-safety analysis (-Wthread-safety) over the C++ files of
# src/, sdk/, examples/, tests/fakes/ and tests/common/, so that a GUARDED_BY
# member touched without its lock, or a REQUIRES function called without it,
# fails the check. The annotations are in src/common/thread_annotations.h and
# src/common/mutex.h.
#
# It reuses the compile commands of the g++ build (build/compile_commands.json,
# written by scripts/build.sh) with the compiler swapped for clang++ and only
# syntax checking, so it needs that build first but compiles nothing itself.
# A file that does not include common/thread_annotations.h, directly or through
# the project's headers, has nothing the analysis could check and is skipped
# (--all checks it anyway).
#
#   scripts/check-thread-safety.sh            # every file that sees the annotations
#   scripts/check-thread-safety.sh --all      # every file
#   scripts/check-thread-safety.sh src/dispatch/reconciler.cc ...
#
# Environment: CLANGXX (default clang++-14, else clang++), BUILD_DIR (default
# build), EXPORT_CENTER_BUILD_JOBS (parallel files, default 2).
set -euo pipefail
# FILE arguments are relative to the caller's directory.
args=()
for a in "$@"; do
  case "$a" in
    -*) args+=("$a") ;;
    *) args+=("$(realpath -m "$a")") ;;
  esac
done
set -- "${args[@]}"
cd "$(dirname "$0")/.."
root="$(pwd -P)"

db="${BUILD_DIR:-build}/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "check-thread-safety: $db is missing; run scripts/build.sh first" >&2
  exit 2
fi

clangxx="${CLANGXX:-}"
if [ -z "$clangxx" ]; then
  for candidate in clang++-14 clang++; do
    if command -v "$candidate" >/dev/null; then
      clangxx="$candidate"
      break
    fi
  done
fi
if [ -z "$clangxx" ] || ! command -v "$clangxx" >/dev/null; then
  echo "check-thread-safety: clang++ not found; run scripts/install-deps.sh" >&2
  exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One clang response file per translation unit: the g++ command without the
# compiler, output, warning and optimisation flags, plus the analysis flags.
python3 - "$root" "$db" "$work" "$@" <<'PY'
import json
import os
import re
import shlex
import sys

root, db, work, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
check_all = "--all" in args
only = {os.path.normpath(os.path.join(root, a)) for a in args if not a.startswith("-")}
dirs = ("src/", "sdk/", "examples/", "tests/fakes/", "tests/common/")
annotations = os.path.join(root, "src", "common", "thread_annotations.h")
added = [
    "-fsyntax-only",
    "-Wthread-safety",
    "-Werror=thread-safety",
    "-Wno-unknown-warning-option",
    "-Qunused-arguments",
]

entries = json.load(open(db))
for entry in entries:
    if "arguments" not in entry:
        entry["arguments"] = shlex.split(entry["command"])

# The project's own -I directories, from every command.
include_dirs = []
for entry in entries:
    for a in entry["arguments"]:
        if a.startswith("-I") and len(a) > 2:
            d = os.path.normpath(os.path.join(entry["directory"], a[2:]))
            if d.startswith(root + os.sep) or d == root:
                if d not in include_dirs:
                    include_dirs.append(d)

include_re = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
sees = {}


def sees_annotations(path):
    """Whether `path` includes thread_annotations.h, directly or through the
    project's headers. Errs towards yes: #if is not evaluated."""
    if path == annotations:
        return True
    if path not in sees:
        sees[path] = False  # ends an include cycle
        with open(path, errors="replace") as f:
            names = include_re.findall(f.read())
        for name in names:
            for base in [os.path.dirname(path)] + include_dirs:
                # realpath: include roots are symlinks (cmake/ComponentHeaders.cmake).
                header = os.path.realpath(os.path.join(base, name))
                if os.path.isfile(header):
                    if sees_annotations(header):
                        sees[path] = True
                    break
            if sees[path]:
                break
    return sees[path]


count = 0
skipped = 0
for entry in entries:
    directory = entry["directory"]
    source = os.path.realpath(os.path.join(directory, entry["file"]))
    rel = os.path.relpath(source, root)
    if not rel.endswith(".cc") or not rel.startswith(dirs):
        continue
    if only and source not in only:
        continue
    if not only and not check_all and not sees_annotations(source):
        skipped += 1
        continue
    args = entry["arguments"]
    kept = []
    i = 1  # args[0] is the compiler
    while i < len(args):
        a = args[i]
        i += 1
        if a == "-o":
            i += 1
        elif a in ("-c", source, entry["file"]):
            pass
        elif a.startswith(("-W", "-O", "-g")) or a == "-pipe":
            pass  # g++'s warnings and code generation are not this check's business
        elif a in ("-I", "-isystem", "-iquote", "-include"):
            kept += [a, os.path.join(directory, args[i])]
            i += 1
        elif a.startswith("-I") and len(a) > 2:
            kept.append("-I" + os.path.join(directory, a[2:]))
        else:
            kept.append(a)
    count += 1
    with open(os.path.join(work, "%04d.rsp" % count), "w") as rsp:
        rsp.write(" ".join(shlex.quote(a) for a in kept + added + [source]) + "\n")
if count == 0:
    sys.exit("check-thread-safety: no matching files in " + db)
with open(os.path.join(work, "skipped"), "w") as f:
    f.write("%d\n" % skipped)
PY

files=$(ls "$work"/*.rsp | wc -l)
echo "check-thread-safety: $clangxx -Wthread-safety over $files files" \
  "($(cat "$work/skipped") without annotations skipped)"
# Each job leaves clang's output in <n>.log and, on failure, a <n>.failed mark.
export clangxx
ls "$work"/*.rsp | xargs -P "${EXPORT_CENTER_BUILD_JOBS:-2}" -I{} \
  sh -c '"$clangxx" "@$1" >"${1%.rsp}.log" 2>&1 || touch "${1%.rsp}.failed"' _ {}

failed=0
for mark in "$work"/*.failed; do
  [ -e "$mark" ] || continue
  failed=$((failed + 1))
  cat "${mark%.failed}.log"
done
if [ "$failed" -gt 0 ]; then
  echo "check-thread-safety: FAILED in $failed of $files files" >&2
  exit 1
fi
echo "check-thread-safety: OK"
