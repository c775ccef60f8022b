"""The previous release against this one (CHANGELOG.md, "Upgrading from 0.9.0"): the
release RELEASES names before CMakeLists.txt's project VERSION, its sources taken from
its commit with `git archive`.

- Its Java sample service (examples/order-service-java at that commit) builds, with its
  own tests, against this checkout's SDK artifacts (installed into the project's Maven
  repository first), and exports through this build's center: the order-service tests'
  JavaServiceExports run against the old jar, cell by cell.
- The same sources with their `export-center-mybatis` dependency removed, as a service
  written from the docs before 0.9.0 had it, still compile: the starter brings the module
  (deprecated until 2.0.0).
- This build's center starts on each of its sample configurations (config/*.yaml at
  that commit): `check`'s config step passes, and the ones on SQLite, local files and the
  embedded channel are served (`serve`, /healthz answers this version, SIGTERM exits 0);
  or it fails with exactly the messages EXPECTED_FAILURES lists, each of which CHANGELOG.md
  or docs/deploy.md quotes. The sample configuration of the last commit before iss and aud
  became required (BEFORE_ISS_AUD) fails with the two messages CHANGELOG.md's "Upgrading
  from before 0.9.0" names.

Needs the repository's history down to those commits: a shallow clone fails here with a
message saying so, it does not skip. About 4 minutes (Maven on two cores).

Run: /usr/bin/python3 previous_release_test.py BUILD_DIR
"""
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import unittest

import yaml

sys.path.insert(0, os.path.dirname(__file__))
import order_service_java_test as java_e2e  # noqa: E402
from harness import free_port, request, wait_http  # noqa: E402
from export_center_testkit import REPO, previous_release, project_version  # noqa: E402

BUILD_DIR = None
MVN = os.path.join(REPO, "scripts", "mvn.sh")

# Sample configurations of the previous release that this one refuses on purpose:
# {file name: [message, ...]}; each message must be quoted by the upgrade notes.
EXPECTED_FAILURES = {}

# The last commit before `auth.jwt-issuer` and `auth.jwt-audience` became required
# (38f915f): its config/demo.yaml is a configuration from before 0.9.0.
BEFORE_ISS_AUD = "d33e8d9a77405380993c518bc9bd4b545f161b12"
ISS_AUD_MESSAGES = [
    "auth.jwt-issuer: is required: the iss claim every accepted token carries",
    "auth.jwt-audience: is required: the aud value (or one of them) every accepted token carries",
]

WORK = None
OLD_JAR = None


def git(*args, **kwargs):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, timeout=120, **kwargs)


def require_commit(commit, what):
    """Fails, never skips, when this clone cannot give the commit's sources."""
    top = git("rev-parse", "--show-toplevel", text=True)
    if top.returncode != 0:
        raise AssertionError(f"{REPO} is not a git clone: this test takes {what}'s sources from "
                             f"commit {commit}; run it in a clone with history")
    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        raise AssertionError(
            f"this clone lacks commit {commit} ({what}, named in RELEASES or this test): a "
            "shallow clone; fetch the history (`git fetch --unshallow`) and run again")


def extract(commit, paths, into):
    """`git archive` of `paths` at `commit`, unpacked into `into`."""
    r = git("archive", "--format=tar", commit, *paths)
    if r.returncode != 0:
        raise AssertionError(f"git archive {commit} {paths}: {r.stderr.decode()}")
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tar:
        tar.extractall(into)
    return into


def mvn(*args, timeout=900):
    r = subprocess.run([MVN, *args], capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


# Per previous release: the surefire selection of its sample's tests, leaving out the
# tests that pin a behaviour CHANGELOG.md lists as changed in this release.
PINNED_TESTS = {"1.0.0": "!DtoColumnsTest"}


def setUpModule():
    global WORK, OLD_JAR
    version, commit = previous_release()
    require_commit(commit, version)
    WORK = tempfile.mkdtemp(prefix="ec-previous-release-")
    extract(commit, ["examples/order-service-java", "config"], os.path.join(WORK, version))
    # This checkout's SDK in the project's Maven repository, as a team's build consumes it.
    code, out = mvn("-q", "-f", os.path.join(REPO, "sdk-java", "pom.xml"), "install",
                    "-DskipTests", "-pl", ".,export-center-sdk,export-center-mybatis,"
                    "export-center-test,export-center-spring-boot-starter")
    if code != 0:
        raise AssertionError(f"installing this checkout's SDK failed:\n{out[-4000:]}")
    # The previous release's sample, its own tests included, on this SDK's version.
    pom = os.path.join(WORK, version, "examples", "order-service-java", "pom.xml")
    # All its tests but the ones pinning what CHANGELOG.md names as changed since: a DTO's
    # multi-level @ExcelProperty is a grouped title from 1.1.0 on (DtoColumnsTest compared
    # 1.0.0's flattened title with the sample's hand-written columns).
    code, out = mvn("-f", pom, f"-Dexport-center.version={project_version()}",
                    f"-Dexport.center.bin={os.path.join(BUILD_DIR, 'export-center')}",
                    f"-Dtest={PINNED_TESTS.get(version, '*')}",
                    "-Dsurefire.failIfNoSpecifiedTests=false", "package")
    if code != 0:
        raise AssertionError(f"{version}'s order-service-java does not build against the "
                             f"{project_version()} SDK:\n{out[-6000:]}")
    OLD_JAR = os.path.join(os.path.dirname(pom), "target", "order-service-java.jar")
    if not os.path.exists(OLD_JAR):
        raise AssertionError(f"{OLD_JAR} was not built:\n{out[-3000:]}")


def tearDownModule():
    if WORK and not os.environ.get("EC_KEEP_TEST_DIR"):
        shutil.rmtree(WORK, ignore_errors=True)


def without_mybatis_dependency(pom_text):
    """The POM with its export-center-mybatis <dependency> block removed."""
    out, n = re.subn(r"\s*<dependency>\s*<groupId>io\.exportcenter</groupId>\s*"
                     r"<artifactId>export-center-mybatis</artifactId>.*?</dependency>", "",
                     pom_text, flags=re.S)
    if n != 1:
        raise AssertionError("the sample's POM has no export-center-mybatis dependency to remove")
    return out


class PreviousJavaService(unittest.TestCase):
    def test_a_service_that_relied_on_the_starter_for_mybatis_still_compiles(self):
        version, _ = previous_release()
        src = os.path.join(WORK, version, "examples", "order-service-java")
        copy = os.path.join(WORK, "without-mybatis-dependency")
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("target"))
        pom = os.path.join(copy, "pom.xml")
        with open(pom, encoding="utf-8") as f:
            text = without_mybatis_dependency(f.read())
        with open(pom, "w", encoding="utf-8") as f:
            f.write(text)
        uses = subprocess.run(["grep", "-rl", "import io.exportcenter.mybatis", "src/main"],
                              cwd=copy, capture_output=True, text=True).stdout.split()
        self.assertTrue(uses, "the sample no longer imports io.exportcenter.mybatis")
        code, out = mvn("-f", pom, f"-Dexport-center.version={project_version()}", "compile")
        self.assertNotIn("package io.exportcenter.mybatis does not exist", out)
        self.assertEqual(code, 0, out[-4000:])


class PreviousJavaServiceExports(java_e2e.JavaServiceExports):
    """The order-service tests' exports, from the previous release's jar."""

    @classmethod
    def setUpClass(cls):
        java_e2e.BUILD_DIR = BUILD_DIR
        java_e2e.JAR = OLD_JAR
        super().setUpClass()


class PreviousConfigurations(unittest.TestCase):
    binary = property(lambda self: os.path.join(BUILD_DIR, "export-center"))

    def upgrade_notes(self):
        text = ""
        for name in ("CHANGELOG.md", os.path.join("docs", "deploy.md")):
            with open(os.path.join(REPO, name), encoding="utf-8") as f:
                text += f.read()
        return text

    def check_config_step(self, path, cwd):
        r = subprocess.run([self.binary, "check", "--json", "--config", path], cwd=cwd,
                           capture_output=True, text=True, timeout=120)
        rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
        config = [row for row in rows if row["step"] == "config"]
        self.assertEqual(len(config), 1, r.stdout + r.stderr)
        return config[0]

    def serve(self, path, cwd):
        """Starts `serve` on a free port; /healthz must answer this version. Returns the
        exit code after SIGTERM, or (code, output) when it exits by itself first."""
        port = free_port()
        log_path = os.path.join(cwd, "serve.log")
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([self.binary, "serve", "--config", path], cwd=cwd,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    env={**os.environ, "EXPORT_CENTER_SERVER__PORT": str(port)})
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=60)
            health = request("GET", f"http://127.0.0.1:{port}/healthz").json()["data"]
            self.assertEqual(health["version"], project_version())
            proc.send_signal(signal.SIGTERM)
            return proc.wait(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)

    def test_each_sample_configuration_starts_or_fails_as_the_notes_say(self):
        version, _ = previous_release()
        configs = sorted(glob.glob(os.path.join(WORK, version, "config", "*.yaml")))
        self.assertGreaterEqual(len(configs), 3, configs)
        notes = self.upgrade_notes()
        for path in configs:
            name = os.path.basename(path)
            with self.subTest(config=name):
                cwd = tempfile.mkdtemp(prefix=name + "-", dir=WORK)
                step = self.check_config_step(path, cwd)
                expected = EXPECTED_FAILURES.get(name)
                if expected:
                    self.assertEqual(step["status"], "FAIL", step)
                    for message in expected:
                        self.assertIn(message, step["detail"])
                        self.assertIn(message, notes, "the upgrade notes must name it")
                    continue
                self.assertEqual(step["status"], "ok", f"{version}'s {name}: {step['detail']}")
                with open(path, encoding="utf-8") as f:
                    doc = yaml.safe_load(f)
                local = ((doc.get("database") or {}).get("kind", "sqlite") == "sqlite" and
                         (doc.get("storage") or {}).get("kind", "local") == "local" and
                         (doc.get("channel") or {}).get("kind", "embedded") == "embedded")
                if local:  # the others need their servers: the config step is what is checked
                    self.assertEqual(self.serve(path, cwd), 0, name)

    def test_a_configuration_from_before_0_9_0_fails_with_the_noted_messages(self):
        require_commit(BEFORE_ISS_AUD, "the configuration before iss and aud were required")
        old = extract(BEFORE_ISS_AUD, ["config/demo.yaml"], os.path.join(WORK, "before-0.9.0"))
        path = os.path.join(old, "config", "demo.yaml")
        r = subprocess.run([self.binary, "serve", "--config", path], cwd=old,
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "EXPORT_CENTER_SERVER__PORT": str(free_port())})
        self.assertNotEqual(r.returncode, 0, r.stdout)
        notes = self.upgrade_notes()
        for message in ISS_AUD_MESSAGES:
            self.assertIn(message, r.stderr)
            self.assertIn(message, notes, "CHANGELOG.md must name it")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
