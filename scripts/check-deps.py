#!/usr/bin/env python3
"""Fails when a source file includes a component the dependency table does not allow.

The table is the "Allowed dependencies" table of docs/layout.md: one row per
component folder, naming the folders its files may include. A file belongs to
the longest folder of the table that contains it; an include "a/b/c.h" names
the longest folder of the table it lies in. A component may always include
itself. The build enforces the same walls at target granularity (each target
sees only the headers of what it links, cmake/ComponentHeaders.cmake); this
check is finer: it also separates backends (store/postgres) from their seams.

Options headers (options.h, *_options.h) are plain data: config/ fills them
without the code that reads them. A table entry "storage/s3 (options)" allows
only that folder's options headers, and every options header of a folder some
row names so includes only standard headers and other options headers.

Usage: scripts/check-deps.py [REPO_ROOT]   exit 0 when clean, 1 on a violation.
"""
import os
import re
import sys

TABLE_HEADING = "## Allowed dependencies"
SCANNED = ("src", "sdk", "examples", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
OPTIONS_ONLY = "(options)"


def is_options_header(path):
    name = os.path.basename(path)
    return name == "options.h" or name.endswith("_options.h")


def read_table(layout_path):
    """Returns {component folder: {folder it may include: True when only its options headers}}."""
    allowed = {}
    in_section = False
    with open(layout_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.strip() == TABLE_HEADING
                continue
            if not in_section or not line.startswith("|"):
                continue
            cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or cells[0] in ("component", "") or set(cells[0]) <= {"-", ":"}:
                continue
            deps = {}
            for d in cells[2].split(","):
                d = d.strip().strip("`")
                options_only = d.endswith(OPTIONS_ONLY)
                d = d[: -len(OPTIONS_ONLY)].strip() if options_only else d
                if d and d != "—":
                    deps[d] = options_only
            allowed[cells[0]] = deps
    if not allowed:
        sys.exit(f"check-deps: no '{TABLE_HEADING}' table in {layout_path}")
    return allowed


def component_of(folder, components):
    """The longest table folder that is `folder` or contains it."""
    best = None
    for c in components:
        if folder == c or folder.startswith(c + "/"):
            if best is None or len(c) > len(best):
                best = c
    return best


def include_folder(include):
    # Includes start at the source root; src/ is not part of them.
    return os.path.dirname(include)


def file_folder(path):
    folder = os.path.dirname(path)
    return folder[len("src/"):] if folder.startswith("src/") else folder


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    allowed = read_table(os.path.join(root, "docs", "layout.md"))
    components = list(allowed)
    # The folders whose options headers some component reads as plain data.
    options_folders = {d for deps in allowed.values() for d, only in deps.items() if only}
    problems = []
    for top in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                me = component_of(file_folder(path), components)
                if me is None:
                    problems.append(f"{path}: its folder is not in the table of docs/layout.md")
                    continue
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                plain_data = is_options_header(path) and me in options_folders
                for lineno, inc in iter_includes(text):
                    if plain_data and not is_options_header(inc):
                        problems.append(
                            f"{path}:{lineno}: an options header includes \"{inc}\"; "
                            "it may include only standard headers and other options headers")
                        continue
                    if "/" not in inc:
                        continue  # a header beside the file ("customer_db.h")
                    target = component_of(include_folder(inc), components)
                    if target is None:
                        problems.append(f"{path}:{lineno}: includes \"{inc}\", a folder the table does not know")
                    elif target != me and target not in allowed[me]:
                        problems.append(
                            f"{path}:{lineno}: {me} may not include {target} (\"{inc}\"); "
                            f"allowed: {', '.join(sorted(allowed[me])) or 'nothing'}")
                    elif target != me and allowed[me][target] and not is_options_header(inc):
                        problems.append(
                            f"{path}:{lineno}: {me} may include only the options headers of "
                            f"{target}, not \"{inc}\"")
    for p in problems:
        print(p)
    if problems:
        print(f"check-deps: {len(problems)} include(s) break docs/layout.md's allowed dependencies")
        return 1
    print(f"check-deps: every include of {', '.join(SCANNED)} is allowed")
    return 0


def iter_includes(text):
    for m in INCLUDE.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


if __name__ == "__main__":
    sys.exit(main())
