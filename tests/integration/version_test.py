"""The release and commit a binary was built from (docs/deploy.md#versions):

- `export-center --version` prints "export-center VERSION (commit HASH)", alone and
  before any subcommand, exit 0; VERSION is CMakeLists.txt's project VERSION and HASH
  the source checkout's abbreviated HEAD;
- GET /healthz carries both in `data`, and GET /metrics the info series
  `export_center_build_info{commit=...,version=...} 1`;
- cmake/BuildInfo.cmake, which writes them into the binary on every build, takes a new
  commit (and only rewrites its file when the text changes, so an unchanged build
  recompiles nothing), and says "unknown" for sources that are not the top of a git
  checkout (e.g. `git archive` output unpacked inside another checkout).

`export-center check` prints the same line first: check_command_test.py.

Run: /usr/bin/python3 version_test.py BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Cluster, request  # noqa: E402
from export_center_testkit import REPO, project_version, source_commit  # noqa: E402

BUILD_DIR = None
METRICS_TOKEN = "version-test-metrics-token-0123456789"


class VersionTest(unittest.TestCase):
    def test_version_flag_prints_the_version_and_the_commit(self):
        binary = os.path.join(BUILD_DIR, "export-center")
        r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(),
                         f"export-center {project_version()} (commit {source_commit()})")
        self.assertRegex(r.stdout, r"\(commit [0-9a-f]{12}\)")  # this test runs in a checkout

    def test_healthz_and_metrics_expose_the_build(self):
        c = Cluster(BUILD_DIR, prefix="ec-version-",
                    overrides={"auth": {"metrics-bearer-token": METRICS_TOKEN}})
        try:
            c.start_center()
            health = request("GET", c.base + "/healthz")
            self.assertEqual(health.status, 200)
            self.assertEqual(health.json()["data"], {"status": "UP", "version": project_version(),
                                                     "commit": source_commit()})
            metrics = request("GET", c.base + "/metrics",
                              headers={"Authorization": "Bearer " + METRICS_TOKEN})
            self.assertEqual(metrics.status, 200)
            lines = [line for line in metrics.body.decode().splitlines()
                     if line.startswith("export_center_build_info")]
            self.assertEqual(lines, [f'export_center_build_info{{commit="{source_commit()}",'
                                     f'version="{project_version()}"}} 1'])
        finally:
            c.cleanup()


class BuildInfoScriptTest(unittest.TestCase):
    """cmake/BuildInfo.cmake on a throwaway git repository."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ec-build-info-")
        self.repo = os.path.join(self.dir, "repo")
        os.makedirs(self.repo)
        self.git("init", "-q")
        self.commit("first")
        self.output = os.path.join(self.dir, "build_info.cc")

    def git(self, *args):
        return subprocess.run(["git", "-C", self.repo, "-c", "user.name=t", "-c", "user.email=t@t",
                               *args], check=True, capture_output=True, text=True).stdout.strip()

    def commit(self, message):
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "--short=12", "HEAD")

    def generate(self, source_dir, version="1.2.3"):
        subprocess.run(["cmake", f"-DOUTPUT={self.output}", f"-DVERSION={version}",
                        f"-DSOURCE_DIR={source_dir}", "-P",
                        os.path.join(REPO, "cmake", "BuildInfo.cmake")],
                       check=True, capture_output=True, timeout=60)
        with open(self.output, encoding="utf-8") as f:
            return f.read()

    def test_a_new_commit_rewrites_the_file_and_an_unchanged_one_does_not(self):
        text = self.generate(self.repo)
        head = self.git("rev-parse", "--short=12", "HEAD")
        self.assertIn('Version() { return "1.2.3"; }', text)
        self.assertIn(f'Commit() {{ return "{head}"; }}', text)
        before = os.stat(self.output).st_mtime_ns
        time.sleep(0.05)
        self.assertEqual(self.generate(self.repo), text)
        self.assertEqual(os.stat(self.output).st_mtime_ns, before, "rewritten without a change")
        second = self.commit("second")
        self.assertIn(f'Commit() {{ return "{second}"; }}', self.generate(self.repo))
        self.assertIn('Version() { return "1.3.0"; }', self.generate(self.repo, "1.3.0"))

    def test_sources_that_are_not_the_top_of_a_checkout_say_unknown(self):
        inside = os.path.join(self.repo, "old-release-sources")
        os.makedirs(inside)
        self.assertIn('Commit() { return "unknown"; }', self.generate(inside))
        outside = os.path.join(self.dir, "tarball")
        os.makedirs(outside)
        self.assertIn('Commit() { return "unknown"; }', self.generate(outside))

    def test_a_version_that_is_not_semantic_fails_the_build(self):
        r = subprocess.run(["cmake", f"-DOUTPUT={self.output}", "-DVERSION=1.0",
                            f"-DSOURCE_DIR={self.repo}", "-P",
                            os.path.join(REPO, "cmake", "BuildInfo.cmake")],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is not MAJOR.MINOR.PATCH", r.stderr)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
