"""What a build is and what it upgrades from: the project version (CMakeLists.txt's
`project(... VERSION x.y.z ...)`, the one place it is written), the commit the sources
are at (as cmake/BuildInfo.cmake writes it into the binary), and the releases the
RELEASES file names (version -> commit; a file because tags do not travel reliably
with a clone)."""
import os
import re
import subprocess

from .servers import REPO

_PROJECT_VERSION = re.compile(r"^project\(\s*export_center\s+VERSION\s+(\d+\.\d+\.\d+)\b", re.M)


def project_version(repo=REPO):
    """"1.0.0": CMakeLists.txt's project VERSION."""
    with open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8") as f:
        match = _PROJECT_VERSION.search(f.read())
    if not match:
        raise ValueError(f"{repo}/CMakeLists.txt: no project(export_center VERSION x.y.z)")
    return match.group(1)


def source_commit(repo=REPO):
    """The 12-digit abbreviated HEAD the binary reports, or "unknown" when `repo`
    is not the top of a git checkout (cmake/BuildInfo.cmake's rule)."""
    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                              timeout=30)
    top = git("rev-parse", "--show-toplevel")
    if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(repo):
        return "unknown"
    head = git("rev-parse", "--short=12", "HEAD")
    return head.stdout.strip() if head.returncode == 0 else "unknown"


def releases(repo=REPO):
    """[(version, commit)] from RELEASES, oldest first."""
    rows = []
    with open(os.path.join(repo, "RELEASES"), encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                if len(fields) < 2 or not re.fullmatch(r"[0-9a-f]{40}", fields[1]):
                    raise ValueError(f"RELEASES: not 'version commit note': {line.rstrip()}")
                rows.append((fields[0], fields[1]))
    return rows


def previous_release(repo=REPO):
    """(version, commit) of the newest release RELEASES names below the project version."""
    current = tuple(int(p) for p in project_version(repo).split("."))
    older = [(v, c) for v, c in releases(repo) if tuple(int(p) for p in v.split(".")) < current]
    if not older:
        raise ValueError(f"RELEASES names no release before {project_version(repo)}")
    return max(older, key=lambda r: tuple(int(p) for p in r[0].split(".")))
