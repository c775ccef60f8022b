"""The download-center page in a real browser: Debian chromium, headless,
driven by playwright-core (npm, installed by scripts/install-node-tools.sh)
through tests/integration/page/download_center_test.js, against a real center
and the sample customer service started here (harness.Cluster).

This file prepares what the browser needs — two tenants' tokens, a task that
FAILED for real (the provider answers 503 until the attempts are used up) and
a task that EXPIRED — and runs the browser script. The script signs in via
#token, creates an export from the form and watches its progress reach 100 %
over SSE, downloads it and compares the bytes with the API's download,
cancels a running export, retries the failed one, finds the expired one, and
checks that the second tenant's page shows none of the first tenant's tasks.
Screenshots: BUILD_DIR/test-artifacts/page/.

Run: /usr/bin/python3 page_browser_test.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import REPO, Cluster  # noqa: E402

BUILD_DIR = None


def node_path():
    script = os.path.join(REPO, "scripts", "install-node-tools.sh")
    subprocess.run([script], check=True, stdout=subprocess.DEVNULL)
    return subprocess.check_output([script, "--print-node-path"], text=True).strip()


class DownloadCenterPage(unittest.TestCase):
    def setUp(self):
        # Small batches: an export of the seeded customers takes several pages,
        # so progress moves visibly.
        self.c = Cluster(BUILD_DIR, seed=3000, overrides={
            "definitions": {"CUSTOMER_LIST": {"batch-size": 300}}}).start()
        self.addCleanup(self.c.cleanup)
        self.alice = self.c.token("alice", "1")
        self.bob = self.c.token("bob", "2")

    def failed_task(self):
        self.c.faults(fail503=1000)
        created = self.c.create(self.alice, parameters={"keyword": "will-fail"}, name="会失败的导出")
        task = self.c.wait_task(self.alice, created["data"]["id"], states=("FAILED",), timeout=60)
        self.c.faults(fail503=0)
        return task["id"]

    def expired_task(self):
        created = self.c.create(self.alice, parameters={"keyword": "柏悦"}, name="已过期的导出")
        task = self.c.wait_task(self.alice, created["data"]["id"], states=("SUCCEEDED",))
        db = self.c.db()
        db.execute(f"UPDATE export_task SET status = 'EXPIRED', updated_at = {db.NOW}"
                   " WHERE id = ?", (int(task["id"]),))
        return task["id"]

    def test_the_page_in_chromium(self):
        artifacts = os.path.join(BUILD_DIR, "test-artifacts", "page")
        config = {
            "base": self.c.base,
            "providerBase": self.c.provider_base,
            "internalToken": "e2e-internal-token",
            "aliceToken": self.alice,
            "bobToken": self.bob,
            "failedId": self.failed_task(),
            "expiredId": self.expired_task(),
            "artifacts": artifacts,
            "tmp": self.c.dir,
        }
        env = {**os.environ, "EC_PAGE_TEST": json.dumps(config), "NODE_PATH": node_path()}
        script = os.path.join(os.path.dirname(__file__), "page", "download_center_test.js")
        r = subprocess.run(["node", script], env=env, capture_output=True, text=True, timeout=240)
        print(r.stdout, file=sys.stderr)
        self.assertEqual(r.returncode, 0, r.stderr + "\n--- center log tail ---\n" +
                         self.c.log()[-3000:])
        self.assertIn("all checks passed", r.stdout)
        self.assertNotIn(self.alice, self.c.log(), "a token reached the center's log")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
