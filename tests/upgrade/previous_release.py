"""The previous release's server binary, built from its commit in RELEASES.

    previous_release.py BUILD_DIR     prints "VERSION COMMIT PATH" (builds it first if needed)

The previous release is the newest line of RELEASES older than this tree's project
VERSION (CMakeLists.txt). Its sources come from `git archive COMMIT` (so the
repository's history must hold the commit: a shallow clone needs `git fetch
--unshallow`); only the server is configured and built (tests and benchmarks OFF,
target `export-center`), through ccache when the machine has it (CMakeLists.txt uses
it by itself). The binary is kept in BUILD_DIR/previous-release/VERSION-COMMIT/, so a
second run costs nothing; the sources and object files are deleted once it is built.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def parts(version):
    return tuple(int(p) for p in version.split("."))


def this_version():
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*\w+\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("no project VERSION in CMakeLists.txt")
    return m.group(1)


def releases():
    """[(version, commit)] from RELEASES, oldest first."""
    out = []
    with open(os.path.join(REPO, "RELEASES"), encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if fields and not line.startswith("#") and len(fields) >= 2:
                out.append((fields[0], fields[1]))
    return out


def previous_release():
    """(version, commit) of the newest release older than this tree."""
    mine = parts(this_version())
    older = [r for r in releases() if parts(r[0]) < mine]
    if not older:
        raise RuntimeError(f"RELEASES names no release older than {this_version()}")
    return max(older, key=lambda r: parts(r[0]))


def build(build_dir, log=sys.stderr):
    """(version, commit, path of its export-center, seconds spent building: 0 when cached)."""
    version, commit = previous_release()
    home = os.path.join(os.path.abspath(build_dir), "previous-release", f"{version}-{commit[:12]}")
    binary = os.path.join(home, "export-center")
    if os.path.exists(binary):
        return version, commit, binary, 0.0
    started = time.time()
    os.makedirs(home, exist_ok=True)
    # The tree sits at TREE/{src,...} with its build in TREE/build, the layout of the
    # main checkout, so that ccache (CCACHE_BASEDIR: paths relative to the build)
    # serves the files the two releases share from the main build's cache.
    tree = tempfile.mkdtemp(prefix="tree-", dir=home)
    try:
        if subprocess.run(["git", "-C", REPO, "cat-file", "-e", commit + "^{commit}"],
                          capture_output=True).returncode != 0:
            raise RuntimeError(f"release {version}: commit {commit} is not in this repository's"
                               " history (a shallow clone? `git fetch --unshallow`)")
        archive = subprocess.Popen(["git", "-C", REPO, "archive", commit], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", tree], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise RuntimeError(f"git archive {commit} failed")
        env = dict(os.environ)
        env.setdefault("CCACHE_BASEDIR", os.path.dirname(REPO))
        env.setdefault("CCACHE_NOHASHDIR", "1")
        cmake = ["cmake", "-S", tree, "-B", os.path.join(tree, "build"), "-G", "Ninja",
                 # -O1 without debug information: the old binary only has to serve the
                 # test, and a cold CI build of it costs a third less than -O2 -g1.
                 "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG",
                 "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG", "-DEXPORT_CENTER_BUILD_TESTS=OFF",
                 "-DEXPORT_CENTER_BUILD_BENCH=OFF", "-DEXPORT_CENTER_WITH_POSTGRES=ON",
                 "-DEXPORT_CENTER_WITH_MYSQL=ON", "-DEXPORT_CENTER_WITH_ROCKETMQ=ON",
                 "-DEXPORT_CENTER_WITH_S3=ON"]
        jobs = os.environ.get("EXPORT_CENTER_BUILD_JOBS", "2")
        for step in (cmake, ["ninja", "-C", os.path.join(tree, "build"), "-j", jobs,
                             "export-center"]):
            print(f"previous release {version}: {' '.join(step)}", file=log, flush=True)
            r = subprocess.run(step, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            if r.returncode != 0:
                raise RuntimeError(f"building release {version} failed:\n{r.stdout[-4000:]}")
        tmp = binary + ".tmp"
        shutil.copy2(os.path.join(tree, "build", "export-center"), tmp)
        os.replace(tmp, binary)  # a cut-short build leaves no binary behind
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    return version, commit, binary, time.time() - started


if __name__ == "__main__":
    v, c, path, seconds = build(sys.argv[1])
    print(f"{v} {c} {path} (built in {seconds:.0f} s)" if seconds else f"{v} {c} {path}")
