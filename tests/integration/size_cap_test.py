"""The file-size cap end to end: an export whose file would pass
limits.max-file-bytes stops while writing, leaves no file (nor partial file)
behind, and fails permanently with the limit in its message.

Run: /usr/bin/python3 size_cap_test.py BUILD_DIR
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Cluster  # noqa: E402

BUILD_DIR = None
CAP = 20000  # bytes; the whole tenant-1 export of 3000 seeded customers is ~5x this


class SizeCap(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(BUILD_DIR, seed=3000,
                         overrides={"limits": {"max-file-bytes": CAP}}).start()
        self.addCleanup(self.c.cleanup)
        self.token = self.c.token("u1", "1")

    def files_under_storage(self):
        found = []
        for folder, _, names in os.walk(os.path.join(self.c.storage_root, "exports")):
            found += [os.path.join(folder, n) for n in names]
        return found

    def test_export_past_the_cap_fails_permanently_and_leaves_no_file(self):
        for fmt in ("XLSX", "CSV"):
            created = self.c.create(self.token, parameters={}, fmt=fmt)
            self.assertEqual(created["code"], "200", created)
            task = self.c.wait_task(self.token, created["data"]["id"])
            self.assertEqual(task["status"], "FAILED", task)
            self.assertEqual(task["failureCode"], "LIMIT_EXCEEDED", task)
            self.assertIn(str(CAP), task["failureMessage"])
            self.assertEqual(task["attemptCount"], 1, "a size cap is not retried")
            r = self.c.api("GET", f"/export-tasks/{task['id']}/download", self.token)
            self.assertEqual(r.status, 409)
        self.assertEqual(self.files_under_storage(), [])

    def test_export_under_the_cap_succeeds(self):
        created = self.c.create(self.token, parameters={"keyword": "柏悦"})
        task = self.c.wait_task(self.token, created["data"]["id"])
        self.assertEqual(task["status"], "SUCCEEDED", task)
        self.assertLessEqual(int(task["sizeBytes"]), CAP)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
