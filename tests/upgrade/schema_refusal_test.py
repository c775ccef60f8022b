"""A binary against a schema a newer release migrated (docs/store.md#compatibility-rule).

On a SQLite store migrated by this binary, a version row is added as a newer release
would write it:
  - a migration that only adds (compatible_from 0.9.0): `serve` starts and works,
    `migrate` and `check` pass;
  - a migration that needs release 99.1.0 (the second step of a two-release plan):
    `serve` and `migrate` refuse to start, `check` fails its store step, each with the
    message naming the migration and the release to run; nothing is changed.

Run: /usr/bin/python3 schema_refusal_test.py BUILD_DIR
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import Cluster  # noqa: E402

BUILD_DIR = None


class SchemaRefusalTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(BUILD_DIR, prefix="ec-refusal-")
        self.addCleanup(self.c.cleanup)
        self.assertEqual(self.run_center("migrate")[0], 0)
        self.db = self.c.db()
        self.latest = self.db.query("SELECT MAX(version) AS v FROM export_schema_version")[0]["v"]

    def run_center(self, *args, timeout=60):
        r = subprocess.run([os.path.join(BUILD_DIR, "export-center"), *args, "--config",
                            self.c.config], capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr

    def add_newer_migration(self, description, compatible_from):
        self.db.execute("INSERT INTO export_schema_version"
                        " (version, description, applied_at, compatible_from)"
                        " VALUES (?, ?, 0, ?)", (self.latest + 1, description, compatible_from))

    def test_a_newer_release_that_only_added_is_accepted(self):
        self.add_newer_migration("export_task.next_column: nullable", "0.9.0")
        code, out = self.run_center("migrate")
        self.assertEqual(code, 0, out)
        code, out = self.run_center("check")
        self.assertRegex(out, r"ok\s+store\s.*newer than this binary's", out)
        self.c.start()
        token = self.c.token("alice", "t1")
        created = self.c.create(token)
        self.assertEqual(created["code"], "200", created)
        self.assertEqual(self.c.wait_task(token, created["data"]["id"])["status"], "SUCCEEDED")

    def test_a_newer_release_that_dropped_what_this_one_reads_is_refused(self):
        self.add_newer_migration("drop export_task.legacy_column", "99.1.0")
        self.db.execute("DELETE FROM export_task_guard")
        message = (f"the database's schema has migration {self.latest + 1} (drop"
                   " export_task.legacy_column), which works only with export-center 99.1.0"
                   " or later; this binary is ")
        for command in ("serve", "migrate"):
            code, out = self.run_center(command)
            self.assertEqual(code, 2, out)
            self.assertIn(message, out)
            self.assertIn("run export-center 99.1.0 or later against this database", out)
        code, out = self.run_center("check")
        self.assertEqual(code, 1, out)
        self.assertRegex(out, r"FAIL\s+store\s.*" + message.replace("(", r"\(").replace(")", r"\)"))
        # Refused before changing anything: the guard row migrate would write is not there.
        self.assertEqual(self.db.query("SELECT COUNT(*) AS n FROM export_task_guard")[0]["n"], 0)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
