"""No exception leaves a thread (docs/conventions.md#threads), end to end: the
built `export-center serve` with the failpoint of every thread it starts
turned on (EXPORT_CENTER_FAILPOINTS=thread.consumer,thread.sse_poller,...),
so that the thread guard throws once inside each thread's body.

With an SSE stream open, previews and exports on both routes (provider
CUSTOMER_LIST, sql-template ORDER_LIST_SQL with SQL enrichment, so the
prefetch, read-ahead and enrich workers run), it asserts:

- the process stays up and keeps answering, and the SSE stream still carries
  the tasks' events after its poller was restarted;
- every thread name is in /metrics as export_thread_failures_total{thread}
  with a count of at least 1, and its log line names it;
- an attempt failed by an injection in the attempt or one of its workers ends
  by the failure classes (docs/task-lifecycle.md#failure-classes): FAILED with
  code INTERNAL and the thread's name in the message; a manual retry of it
  succeeds; an injection in the S3 uploader is a storage failure, retried
  automatically to success;
- a preview failed by injection answers an error, and the next one rows;
- no task is left RUNNING.

Two scenarios: SQLite + the embedded channel + local storage (every thread
but the RocketMQ and S3 ones), and SQLite + RocketMQ (scripts/test-rocketmq.sh)
+ S3 (scripts/test-s3.sh), which adds rmq_service, rmq_remoting and
s3_uploader.

Run: /usr/bin/python3 thread_guard_test.py BUILD_DIR [-k NAME]
"""
import os
import re
import sys
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(__file__))
from harness import (API, ENDED, Cluster, ScriptServer, TaskStream, deep_merge,  # noqa: E402
                     free_port, request, rocketmq_channel)
from order_list_test import order_overrides  # noqa: E402
from s3_storage_test import S3Server  # noqa: E402

BUILD_DIR = None
PERMS = ("platform:customer:export", "platform:order:export")

# Loops restarted by the guard.
LOOPS = ["consumer", "outbox_publish", "reconciler", "notifier", "dlq_handler",
         "lease_watchdog", "sse_poller", "config_watcher", "http_worker", "http_io",
         "subscriptions"]
# Units of an attempt's (or a preview's) work that fail it as Internal.
ATTEMPT_UNITS = ["attempt", "prefetch", "read_ahead", "enrich", "preview"]
ROCKETMQ = ["rmq_service", "rmq_remoting"]
S3 = ["s3_uploader"]


def thread_failures(metrics_text):
    """{thread: count} of export_thread_failures_total."""
    out = {}
    for m in re.finditer(r'^export_thread_failures_total\{thread="([^"]+)"\} (\S+)$',
                         metrics_text, re.M):
        out[m.group(1)] = float(m.group(2))
    return out


class ThreadGuardTest(unittest.TestCase):
    def setUp(self):
        self.started = time.time()

    def tearDown(self):
        print(f"\n  [{self.id().split('.')[-1]}: {time.time() - self.started:.1f}s]",
              file=sys.stderr)

    def start(self, cluster, names):
        self.addCleanup(cluster.cleanup)
        cluster.start_provider()
        cluster.start_center(env={"EXPORT_CENTER_FAILPOINTS":
                                  ",".join("thread." + n for n in names)})

    @staticmethod
    def overrides(cluster):
        """ORDER_LIST_SQL on the service's SQLite file; dedupe off; a webhook
        receiver, so the notifier runs."""
        # Notifications to a port nothing listens on: the notifier thread runs
        # (and fails its deliveries, which is not what this test is about).
        hook = free_port()
        return deep_merge(order_overrides(cluster.dir), {
            "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 20,
                       "max-active-per-type": 100},
            "notifications": {"allowed-targets": [f"127.0.0.1:{hook}"], "backoff-seconds": [1],
                              "poll-interval-ms": 200, "connect-timeout-ms": 200,
                              "timeout-ms": 500,
                              "receivers": {"nobody": {"url": f"http://127.0.0.1:{hook}/h",
                                                       "secret": "s" * 32}}},
        })

    # ---- steps ---------------------------------------------------------------------

    def export_until_success(self, c, token, export_type, parameters, fmt="CSV", tries=8):
        """Creates exports until one SUCCEEDS; each one before it must have been
        failed by an injection. Returns (the succeeded task, the failed ones)."""
        failed = []
        for _ in range(tries):
            created = c.create(token, export_type=export_type, parameters=parameters, fmt=fmt)
            self.assertEqual(created["code"], "200", created)
            task = c.wait_task(token, created["data"]["id"], states=ENDED, timeout=240)
            if task["status"] == "SUCCEEDED":
                return task, failed
            self.assert_injected_failure(c, task)
            failed.append(task)
        self.fail(f"{export_type}: no export succeeded in {tries} tries: {failed}")

    def assert_injected_failure(self, c, task):
        self.assertEqual(task["status"], "FAILED", task)
        self.assertEqual(task.get("failureCode"), "INTERNAL", task)
        # The user sees the classified text; the thread's own words are in the log.
        self.assertEqual(task.get("failureMessage"),
                         "Internal error; support can find the details under the task id", task)
        lines = re.findall(rf"task {task['id']} v\d+: attempt failed failure_code=INTERNAL .*", c.log())
        msg = "\n".join(lines)
        m = re.search(r"thread (\w+): uncaught exception: failpoint thread\.(\w+)", msg)
        self.assertTrue(m, (task, lines))
        self.assertEqual(m.group(1), m.group(2), msg)
        self.assertIn(m.group(1), ATTEMPT_UNITS, msg)

    def retry_until_success(self, c, token, task, tries=6):
        for _ in range(tries):
            r = c.api("POST", f"/export-tasks/{task['id']}/retry", token).json()
            self.assertEqual(r["code"], "200", r)
            task = c.wait_task(token, task["id"], states=ENDED, timeout=240)
            if task["status"] == "SUCCEEDED":
                return task
            self.assert_injected_failure(c, task)
        self.fail(f"task {task['id']}: no retry succeeded: {task}")

    def preview_until_rows(self, c, token, export_type, parameters, tries=8):
        body = {"exportType": export_type, "parameters": parameters}
        answers = []
        for _ in range(tries):
            r = c.api("POST", "/export-previews", token, body).json()
            if r["code"] == "200":
                self.assertTrue(r["data"]["rows"], r)
                return answers
            answers.append(r)
        self.fail(f"{export_type}: no preview answered rows: {answers}")

    def check_after(self, c, names, sse, task_ids):
        self.assertIsNone(c.center.poll(), "the center exited")
        self.assertEqual(c.api("GET", "/export-tasks?pageSize=1",
                               c.token("probe", "1", perms=PERMS)).status, 200)
        # Every guard threw once, counted under its own name, logged by name.
        counts = thread_failures(request("GET", c.base + "/metrics").body.decode("utf-8"))
        log = c.log()
        for name in names:
            self.assertGreaterEqual(counts.get(name, 0), 1, f"{name}: {counts}")
            self.assertIn(f"thread {name}: uncaught exception: failpoint thread.{name}", log)
        self.assertNotIn("terminate called", log)
        # Nothing stays RUNNING.
        running = c.db().query("SELECT id FROM export_task WHERE status = 'RUNNING'")
        self.assertEqual(running, [])
        # The stream outlived its poller's restart: the tasks' events reached it.
        deadline = time.time() + 30
        while time.time() < deadline and not all(sse.has(i) for i in task_ids):
            time.sleep(0.2)
        for i in task_ids:
            self.assertTrue(sse.has(i), f"task {i} never reached the SSE stream: {sse.errors}")
        self.assertEqual(sse.errors, [])

    def run_scenario(self, c, names, uploads=False):
        t1 = c.token("g1", "1", perms=PERMS)
        # Opened with a 200 (TaskStream checks): the poller has started, and is
        # restarted after its throw.
        sse = TaskStream(c.center_port, t1)
        self.addCleanup(sse.close)

        failed = []
        failed_previews = self.preview_until_rows(c, t1, "CUSTOMER_LIST", {"status": "ACTIVE"})
        failed_previews += self.preview_until_rows(c, t1, "ORDER_LIST_SQL", {"status": "PAID"})
        for r in failed_previews:
            self.assertNotEqual(r["code"], "200", r)

        customer, f = self.export_until_success(c, t1, "CUSTOMER_LIST", {})
        failed += f
        order, f = self.export_until_success(c, t1, "ORDER_LIST_SQL", {})
        failed += f
        self.assertTrue(failed, "some export must have failed by an injected throw")
        for task in failed:
            self.retry_until_success(c, t1, task)

        if uploads:
            # More than one 5 MiB part: the uploader thread ran. Its injected
            # throw is a storage failure, so that attempt was retried
            # automatically and the same task succeeded.
            self.assertIn("thread s3_uploader: uncaught exception", c.log())
            attempts = [int(c.task_row(t["id"])["attempt_count"]) for t in [customer] + failed]
            self.assertGreaterEqual(max(attempts), 2, attempts)

        ids = [customer["id"], order["id"]] + [t["id"] for t in failed]
        self.check_after(c, names, sse, ids)
        return customer

    # ---- scenarios -----------------------------------------------------------------

    def test_every_thread_of_an_embedded_center_survives_an_injected_throw(self):
        names = LOOPS + ATTEMPT_UNITS
        cluster = Cluster(BUILD_DIR, seed=3000, concurrency=2, prefix="ec-guard-")
        cluster.write_config(self.overrides(cluster))
        self.start(cluster, names)
        self.run_scenario(cluster, names)

    def test_rocketmq_and_s3_threads_survive_an_injected_throw(self):
        names = LOOPS + ATTEMPT_UNITS + ROCKETMQ + S3
        s3 = S3Server()
        self.addCleanup(s3.stop)
        mq = ScriptServer("test-rocketmq.sh", "ec-guard-mq-")
        self.addCleanup(mq.stop)
        namesrv = mq.start()
        # Tenant 1 gets 60 000 customers: a 7 MB CSV, two multipart parts.
        cluster = Cluster(BUILD_DIR, seed=100000, concurrency=2, prefix="ec-guard-")
        over = deep_merge(self.overrides(cluster),
                          rocketmq_channel(namesrv, f"guard-{uuid.uuid4().hex[:8]}-"))
        over = deep_merge(over, {"storage": s3.storage_config(s3.new_bucket("guard"))})
        cluster.write_config(over)
        cluster.rocketmq_init()
        self.start(cluster, names)
        self.run_scenario(cluster, names, uploads=True)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
