"""Deadlines of the sql-template route against a replica that hangs, end to end
(docs/sql-template-route.md#deadlines): the built export-center and customer-service
binaries, and a throwaway PostgreSQL replica (replica.py) whose `orders` table another
session holds with `LOCK TABLE orders IN ACCESS EXCLUSIVE MODE`, which blocks every read.

- an ORDER_LIST export: each attempt ends at datasources.replica.statement-timeout-ms with
  the database's "statement timeout" message, is retried as the retry rules say, and the task
  ends FAILED once its attempts are used; previews keep answering meanwhile, and the
  server runs none of the center's statements afterwards (pg_stat_activity);
- with a statement timeout far beyond the test, SIGTERM stops `serve` within
  consumer.shutdown-grace-seconds: the waiting statement is cancelled on the server and
  the task is handed back (PENDING).

Run: /usr/bin/python3 replica_deadline_test.py BUILD_DIR [-k NAME]
"""
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Cluster  # noqa: E402
from preview_test import REPLICA_CUSTOMERS, replica_overrides  # noqa: E402
from replica import Replica  # noqa: E402

BUILD_DIR = None
PERMS = ("platform:customer:export", "platform:order:export")
STATEMENT_TIMEOUT_MS = 1500
PREVIEW_SECONDS = 3
GRACE_SECONDS = 4
# The center's statements on the replica that are still running (the holder's own
# session, sleeping inside its transaction, excluded).
RUNNING_SQL = ("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE state = 'active'"
               " AND query NOT LIKE '%pg_sleep%' AND query NOT LIKE '%pg_stat_activity%'"
               " AND query ILIKE '%orders%'")
WAITING_SQL = RUNNING_SQL + " AND wait_event_type = 'Lock'"


class ReplicaDeadline(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.replica = Replica("postgres")
        cls.c = Cluster(BUILD_DIR, seed=REPLICA_CUSTOMERS, prefix="ec-deadline-")
        cls.holder = None
        try:
            cls.replica.start()
            cls.c.write_config(cls.overrides(STATEMENT_TIMEOUT_MS))
            cls.c.start_provider()
            cls.replica.load(os.path.join(cls.c.dir, "customers.db"))
            cls.c.start_center()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.release()
        cls.c.cleanup()
        cls.replica.stop()

    @classmethod
    def overrides(cls, statement_timeout_ms):
        over = replica_overrides(cls.c.dir, cls.replica)
        over["datasources"]["replica"]["statement-timeout-ms"] = statement_timeout_ms
        over["definitions"]["ORDER_LIST"]["max-attempts"] = 2
        over["consumer"] = {"retry-backoff-seconds": [1], "shutdown-grace-seconds": GRACE_SECONDS}
        over["preview"] = {"timeout-seconds": PREVIEW_SECONDS, "per-user-per-minute": 100}
        return over

    @classmethod
    def hold(cls):
        """Another session takes the table and keeps it until release()."""
        cls.holder = subprocess.Popen(
            ["psql", "-X", "-q", "-d", cls.replica.server.address, "-c",
             "BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600)"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            held = cls.replica.db.query(
                "SELECT COUNT(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                " WHERE c.relname = 'orders' AND l.mode = 'AccessExclusiveLock' AND l.granted")
            if held[0]["n"] == 1:
                return
            time.sleep(0.05)
        raise AssertionError("the lock was never taken")

    @classmethod
    def release(cls):
        if cls.holder is None:
            return
        cls.replica.db.query("SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity"
                             " WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()")
        cls.holder.wait(timeout=30)
        cls.holder = None

    def running(self, sql=RUNNING_SQL):
        return self.replica.db.query(sql)[0]["n"]

    def wait_running(self, n, sql=RUNNING_SQL, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.running(sql) == n:
                return
            time.sleep(0.05)
        self.fail(f"{self.running(sql)} statements of the center run, {n} expected")

    def token(self, user):
        return self.c.token(user, "1", perms=PERMS)

    def preview(self, token, export_type, parameters=None):
        start = time.monotonic()
        body = {"exportType": export_type, "parameters": parameters or {}}
        answer = self.c.api("POST", "/export-previews", token, body).json()
        return answer, time.monotonic() - start

    def test_1_attempts_end_at_the_statement_timeout_and_previews_keep_answering(self):
        token = self.token("blocked")
        self.hold()
        try:
            start = time.monotonic()
            created = self.c.create(token, export_type="ORDER_LIST")
            self.assertEqual(created["code"], "200", created)
            task_id = created["data"]["id"]
            self.wait_running(1, WAITING_SQL)  # the first attempt waits for the lock
            # Previews keep answering: a provider type at once, the blocked type at
            # its limit at the latest.
            quick, took = self.preview(self.token("quick"), "CUSTOMER_LIST", {"keyword": "柏悦"})
            self.assertEqual(quick["code"], "200", quick)
            self.assertLess(took, 2.0)
            late, took = self.preview(self.token("late"), "ORDER_LIST")
            self.assertNotEqual(late["code"], "200", late)
            self.assertLess(took, PREVIEW_SECONDS + 1.0, late)
            task = self.c.wait_task(token, task_id, timeout=60)
            elapsed = time.monotonic() - start
            print(f"two attempts at a {STATEMENT_TIMEOUT_MS} ms statement timeout ended the"
                  f" task {task['status']} in {elapsed:.1f} s", file=sys.stderr)
            self.assertEqual(task["status"], "FAILED", task)
            self.assertEqual(task["failureCode"], "RETRIES_EXHAUSTED", task)
            # The user sees the classified text; the log names the statement timeout.
            self.assertEqual(task["failureMessage"], "The data source did not answer in time", task)
            self.assertRegex(self.c.log(), rf"task {task_id} v2: attempt failed "
                                           r"failure_code=\S+ origin=source: .*statement timeout")
            self.assertEqual(task["attemptCount"], 2, task)
            self.assertLess(elapsed, 20)
            self.wait_running(0, timeout=5)  # nothing of the center still runs on the server
        finally:
            self.release()

    def test_2_shutdown_within_its_grace_cancels_the_waiting_statement(self):
        self.c.stop_center()
        self.c.write_config(self.overrides(600000))  # only a cancel ends the statement now
        self.c.start_center()
        token = self.token("shutdown")
        self.hold()
        try:
            created = self.c.create(token, export_type="ORDER_LIST")
            self.assertEqual(created["code"], "200", created)
            task_id = created["data"]["id"]
            self.wait_running(1, WAITING_SQL)
            start = time.monotonic()
            self.c.stop_center()  # SIGTERM, then waits for the exit
            took = time.monotonic() - start
            print(f"serve stopped in {took:.2f} s with a statement waiting on the replica"
                  f" (grace {GRACE_SECONDS} s)", file=sys.stderr)
            self.assertLessEqual(took, GRACE_SECONDS + 0.5)
            self.wait_running(0, timeout=5)  # cancelled on the server, not left waiting
            task = self.c.db().query("SELECT status FROM export_task WHERE id = ?",
                                     (int(task_id),))[0]
            self.assertEqual(task["status"], "PENDING", task)  # handed back for a restart
        finally:
            self.release()
            self.c.start_center()


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
