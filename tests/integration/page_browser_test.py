"""The download-center page in a real browser: Debian chromium, headless,
driven by playwright-core (npm, installed by scripts/install-node-tools.sh)
through tests/integration/page/download_center_test.js, against a real center
and the sample customer service started here (harness.Cluster).

This file prepares what the browser needs — two tenants' tokens, a task that
FAILED for real (the provider answers 503 until the attempts are used up) and
a task that EXPIRED — and runs the browser script. The script signs in via
#token, creates an export from the form and watches its progress reach 100 %
over SSE, downloads it and compares the bytes with the API's download,
cancels a running export, retries the failed one, exports a STALE one again
(its only action: a retry would end STALE again), finds the expired one,
previews an export from the form (rows equal to the API's preview and to the
file the export then writes, nothing queued by the preview; a type over its
max-rows says so with its options, in Chinese and English), and checks that
the second tenant's page shows none of the first tenant's tasks.
A second test runs tests/integration/page/operator_console_test.js: the
operators' console (search across users, a task's dispatch detail, a counted
and confirmed bulk retry, the figures, a dead delivery re-delivered) and a
second tenant's operator seeing nothing of the first.
A third runs tests/integration/page/subscriptions_test.js: the
"Subscriptions / 订阅" view in zh-CN and English (create from the form with
relative dates, bad input refused naming the field, next runs in the browser's
time, pause, resume, run now and the run's task, edit, subscribe on a task,
delete with confirmation) and the console pausing and resuming one; with
subscriptions switched off, none of it is offered.
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
from harness import REPO, Cluster, free_port  # noqa: E402
from order_list_test import order_definition, order_overrides  # noqa: E402

BUILD_DIR = None


def node_path():
    script = os.path.join(REPO, "scripts", "install-node-tools.sh")
    subprocess.run([script], check=True, stdout=subprocess.DEVNULL)
    return subprocess.check_output([script, "--print-node-path"], text=True).strip()


# Two of the customer columns need a permission alice lacks: her rows say
# "2 columns masked" (docs/configuration.md#column-governance-columns).
GOVERNED_CUSTOMERS = {
    "customerName": {"required-permission": "platform:customer:contact", "without": "mask",
                     "keep-first": 1},
    "customerCode": {"required-permission": "platform:customer:contact", "without": "hash"},
}


FILE_KEY_ENCRYPTION_KEY = "page-test-file-key-encryption-key-0123456789"
FILE_PASSWORD = "Page-密码-2026"


class DownloadCenterPage(unittest.TestCase):
    def setUp(self):
        # Small batches: an export of the seeded customers takes several pages,
        # so progress moves visibly. ORDER_LIST_CAPPED (the sql-template route
        # over the sample's orders) has a max-rows far below its count, so its
        # preview is over the limit; it may split into files, so the page names
        # both options a type can allow.
        self.c = Cluster(BUILD_DIR, seed=3000)
        self.addCleanup(self.c.cleanup)
        orders = order_overrides(self.c.dir)
        capped = dict(order_definition("ORDER_LIST", "strict"), **{
            "title": "订单列表（上限 100 行）", "max-rows": 100, "split": "files",
            "rows-per-file": 50})
        self.c.write_config({
            "customer-service": orders["customer-service"],
            "datasources": orders["datasources"],
            # CUSTOMER_LIST takes a file password (the form shows the field).
            "auth": {"file-key-encryption-key": FILE_KEY_ENCRYPTION_KEY},
            "definitions": {"CUSTOMER_LIST": {"batch-size": 300, "columns": GOVERNED_CUSTOMERS,
                                              "file-password": "optional"},
                            "ORDER_LIST_CAPPED": capped}})
        self.c.start()
        perms = ("platform:customer:export", "platform:order:export")
        self.alice = self.c.token("alice", "1", perms=perms)
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

    def stale_task(self):
        # STALE as an attempt leaves it (the business contract's version moved
        # on): only the state matters to the page and to export-again.
        created = self.c.create(self.alice, parameters={"keyword": "柏悦"}, name="数据已变更的导出")
        task = self.c.wait_task(self.alice, created["data"]["id"], states=("SUCCEEDED",))
        db = self.c.db()
        db.execute(f"UPDATE export_task SET status = 'STALE', failure_code = 'STALE',"
                   f" object_key = NULL, updated_at = {db.NOW} WHERE id = ?", (int(task["id"]),))
        return task["id"]

    def encrypted_failed_task(self):
        # Protected, then FAILED with its key erased, as an end leaves it.
        r = self.c.api("POST", "/export-tasks", self.alice,
                       {"exportType": "CUSTOMER_LIST", "taskName": "加密失败的导出",
                        "parameters": {"keyword": "柏悦"}, "filePassword": FILE_PASSWORD})
        created = r.json()
        task = self.c.wait_task(self.alice, created["data"]["id"], states=("SUCCEEDED",))
        db = self.c.db()
        db.execute(f"UPDATE export_task SET status = 'FAILED', failure_code = 'PROVIDER_ERROR',"
                   f" object_key = NULL, updated_at = {db.NOW} WHERE id = ?", (int(task["id"]),))
        return task["id"]

    def history(self, n=45):
        """n old FAILED tasks of alice, a year back: the list holds more than
        two pages, which the page walks through by cursor."""
        db = self.c.db()
        for i in range(n):
            db.execute("INSERT INTO export_task (id, tenant_id, app_code, requested_by,"
                       " export_type, task_name, format, parameters_json, params_hash, status,"
                       " failure_code, failure_message, next_retry_at, requested_at, updated_at)"
                       f" VALUES (?, '1', 'PLATFORM', 'alice', 'CUSTOMER_LIST', ?, 'XLSX', '{{}}',"
                       f" 'h', 'FAILED', 'PROVIDER_ERROR', 'old', {db.NOW} - ?, {db.NOW} - ?,"
                       f" {db.NOW} - ?)",
                       (1000 + i, "历史导出 %02d" % i, *(3 * [86400000 * 365 + i * 1000])))
        return n

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
            "staleId": self.stale_task(),
            "encryptedFailedId": self.encrypted_failed_task(),
            "filePassword": FILE_PASSWORD,
            "history": self.history(),
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
        self.assertNotIn(FILE_PASSWORD, self.c.log(), "a file password reached the center's log")

    # ---- the operators' console (docs/download-center.md#operators-console) ----

    def console_tasks(self):
        """Tenant 1: two of alice's tasks that FAILED (PROVIDER_ERROR) and one of
        carol's with a dead webhook delivery; tenant 2: one of bob's."""
        carol = self.c.token("carol", "1")
        made = {}
        for who, token, keyword in (("a1", self.alice, "console-a1"), ("a2", self.alice, "console-a2"),
                                    ("c1", carol, "console-c1"), ("b1", self.bob, "console-b1")):
            created = self.c.create(token, parameters={"keyword": keyword}, name="运维 " + keyword)
            made[who] = self.c.wait_task(token, created["data"]["id"], states=("SUCCEEDED",))["id"]
        db = self.c.db()
        for who in ("a1", "a2"):
            db.execute(f"UPDATE export_task SET status = 'FAILED', failure_code = 'PROVIDER_ERROR',"
                       f" object_key = NULL, updated_at = {db.NOW} WHERE id = ?", (int(made[who]),))
        dead_id = 9000000000000000001
        db.execute("INSERT INTO export_notification (id, event_id, receiver_id, task_id,"
                   " dispatch_version, task_status, payload_json, status, attempt_count,"
                   f" next_retry_at, last_error, created_at, updated_at) VALUES (?, ?, 'hooks', ?, 1,"
                   f" 'SUCCEEDED', '{{}}', 'DEAD', 8, {db.NOW}, 'HTTP 500', {db.NOW}, {db.NOW})",
                   (dead_id, "console-dead-event", int(made["c1"])))
        return made, str(dead_id)

    def test_the_operator_console_in_chromium(self):
        made, dead_id = self.console_tasks()
        config = {
            "base": self.c.base,
            "aliceToken": self.alice,
            "op1Token": self.c.token("op1", "1", perms=("platform:export:operate",)),
            "op2Token": self.c.token("op2", "2", perms=("platform:export:operate",)),
            "tenant1Ids": [made["a1"], made["a2"], made["c1"]],
            "failedIds": [made["a1"], made["a2"]],
            "tenant2Id": made["b1"],
            "deadId": dead_id,
            "artifacts": os.path.join(BUILD_DIR, "test-artifacts", "page"),
            "tmp": self.c.dir,
        }
        env = {**os.environ, "EC_PAGE_TEST": json.dumps(config), "NODE_PATH": node_path()}
        script = os.path.join(os.path.dirname(__file__), "page", "operator_console_test.js")
        r = subprocess.run(["node", script], env=env, capture_output=True, text=True, timeout=240)
        print(r.stdout, file=sys.stderr)
        self.assertEqual(r.returncode, 0, r.stderr + "\n--- center log tail ---\n" +
                         self.c.log()[-3000:])
        self.assertIn("all checks passed", r.stdout)


    # ---- subscriptions (docs/download-center.md#subscriptions) ----

    def test_subscriptions_in_chromium(self):
        # Recipients need mail configured and in its allowed domains: a
        # loopback relay on a port nobody listens on (what the runs mail is
        # the mail tests' business, not the page's).
        # ORDER_LIST (the sample's orders) has the DATE parameters dateFrom and dateTo.
        self.c.stop_center()
        over = dict(self.c.overrides, mail={
            "enabled": True, "host": "127.0.0.1", "port": free_port(), "tls": "none",
            "from": "exports@example.com", "allowed-domains": ["example.com"]})
        over["definitions"] = dict(over["definitions"],
                                   ORDER_LIST=order_definition("ORDER_LIST", "strict"))
        self.c.write_config(over)
        self.c.start_center()
        self.run_subscriptions_script()

    def run_subscriptions_script(self, **extra):
        config = {
            "base": self.c.base,
            "aliceToken": self.alice,
            "op1Token": self.c.token("op1", "1", perms=("platform:export:operate",)),
            "artifacts": os.path.join(BUILD_DIR, "test-artifacts", "page"),
            "tmp": self.c.dir,
            **extra,
        }
        env = {**os.environ, "EC_PAGE_TEST": json.dumps(config), "NODE_PATH": node_path()}
        script = os.path.join(os.path.dirname(__file__), "page", "subscriptions_test.js")
        r = subprocess.run(["node", script], env=env, capture_output=True, text=True, timeout=240)
        print(r.stdout, file=sys.stderr)
        self.assertEqual(r.returncode, 0, r.stderr + "\n--- center log tail ---\n" +
                         self.c.log()[-3000:])
        self.assertIn("all checks passed", r.stdout)

    def test_subscriptions_off_in_chromium(self):
        # subscriptions.enabled false: the page offers none of it. One task
        # of alice's so the list has a row that could offer "subscribe".
        self.c.stop_center()
        self.c.write_config(dict(self.c.overrides, subscriptions={"enabled": False}))
        self.c.start_center()
        created = self.c.create(self.alice, parameters={"keyword": "柏悦"}, name="关闭订阅时的任务")
        self.c.wait_task(self.alice, created["data"]["id"], states=("SUCCEEDED",))
        self.run_subscriptions_script(subscriptionsOff=True)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
