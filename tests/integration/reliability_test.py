"""Fault injection with real processes (docs/guarantees.md#how-the-guarantees-are-tested).

Each test starts its own customer service and export-center (build/ binaries)
in a temp directory with short durations from the config, injects one fault
— kill -9, provider 503s and hangs, duplicated and corrupt commands, a queue
that waits past sent-stale-seconds, a process clock 5 minutes ahead — and
asserts the product's promise (docs/guarantees.md) from the database rows, the
files on disk and the cells of the downloaded file. Nothing is asserted after a
bare sleep: positive outcomes are polled with a deadline, and "nothing happens"
is asserted at every poll across a window of several reconciler rounds.

Run: /usr/bin/python3 reliability_test.py BUILD_DIR [-k NAME]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from harness import Cluster, deep_merge  # noqa: E402

BUILD_DIR = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

LEASE_SECONDS = 10  # the config's floor (consumer.lease-seconds >= 10)
BACKOFF_STEPS = [1, 2]  # consumer.retry-backoff-seconds
RECONCILER_INTERVAL = 1

# Short durations, so that every recovery path runs within seconds.
FAST = {
    "consumer": {"lease-seconds": LEASE_SECONDS, "heartbeat-seconds": 1,
                 "max-duration-seconds": 120, "retry-backoff-seconds": BACKOFF_STEPS,
                 "shutdown-grace-seconds": 2},
    "publisher": {"poll-interval-ms": 200, "backoff-seconds": [1]},
    "reconciler": {"interval-seconds": RECONCILER_INTERVAL, "redispatch-grace-seconds": 1,
                   "sent-stale-seconds": 30},
    "provider": {"read-timeout-ms": 2000},
    # Several provider batches per export (tenant 1 holds 60 % of the rows).
    "definitions": {"CUSTOMER_LIST": {"batch-size": 100}},
}

DLQ_METRIC = "export_dlq_messages_total"
FAKETIME_LIBS = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


def hold(seconds, check, interval=0.2):
    """Asserts check() at every poll for `seconds` (a window of reconciler rounds)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        check()
        time.sleep(interval)
    check()


class Reliability(unittest.TestCase):
    # ---- helpers ---------------------------------------------------------------

    def setUp(self):
        self.started = time.time()

    def tearDown(self):
        print(f"\n  [{self.id().split('.')[-1]}: {time.time() - self.started:.1f}s]",
              file=sys.stderr)

    def cluster(self, overrides=None, seed=1000, start_center=True):
        c = Cluster(BUILD_DIR, seed=seed, overrides=deep_merge(FAST, overrides),
                    prefix="ec-rel-", snapshot_binaries=True)
        self.addCleanup(c.cleanup)
        c.start_provider()
        if start_center:
            c.start_center()
        self.token = c.token("rel-user", "1")
        return c

    def throwaway_server(self, script_name, prefix):
        """Starts a database server with scripts/<script_name> in a temp folder
        and returns its URL; stopped by its pid after the cluster (LIFO cleanup)."""
        folder = tempfile.mkdtemp(prefix=prefix)
        script = os.path.join(REPO, "scripts", script_name)

        def stop():
            subprocess.run([script, "stop", folder], check=False)
            shutil.rmtree(folder, ignore_errors=True)

        self.addCleanup(stop)
        out = subprocess.check_output([script, "start", folder], text=True)
        return out.strip().splitlines()[-1]

    def create(self, c, parameters, token=None):
        r = c.create(token or self.token, parameters=parameters)
        self.assertEqual(r["code"], "200", r)
        return r["data"]["id"]

    def wait_terminal(self, c, task_id, timeout=90):
        return c.wait_row(task_id, lambda r: r["status"] not in ("PENDING", "RUNNING"),
                          timeout=timeout, what="a terminal state")

    def wait_running(self, c, task_id, timeout=30):
        return c.wait_row(task_id, lambda r: r["status"] == "RUNNING", timeout=timeout,
                          what="RUNNING")

    def assert_cells(self, c, task_id, parameters, tenant="1"):
        """Downloads the file and compares every cell with the provider's database."""
        r = c.api("GET", f"/export-tasks/{task_id}/download", self.token)
        self.assertEqual(r.status, 200, r.body[:200])
        path = os.path.join(c.dir, f"download-{task_id}.xlsx")
        with open(path, "wb") as f:
            f.write(r.body)
        rows = list(openpyxl.load_workbook(path, read_only=True).worksheets[0]
                    .iter_rows(values_only=True))
        expected = customer_data.expected_rows(os.path.join(c.dir, "customers.db"), tenant,
                                               parameters)
        self.assertGreater(len(expected), 0, "the parameters must select some rows")
        self.assertEqual(list(rows[0]), customer_data.TITLES)
        self.assertEqual(len(rows) - 1, len(expected))
        for got, want in zip(rows[1:], expected):
            for g, w in zip(got, want):
                self.assertTrue(customer_data.same_cell(g, w), (got, want))

    def assert_only_files_of(self, c, task_ids, rounds=4):
        """Exactly the SUCCEEDED tasks' files are on disk — temp files of killed
        attempts count as orphans — within a few reconciler rounds."""
        want = sorted(c.task_row(t)["object_key"] for t in task_ids)
        deadline = time.time() + rounds * RECONCILER_INTERVAL + 2
        files = c.stored_files()
        while files != want and time.time() < deadline:
            time.sleep(0.2)
            files = c.stored_files()
        self.assertEqual(files, want, "files on disk other than the SUCCEEDED tasks' own")

    # ---- 1. kill -9 mid-export ---------------------------------------------------

    def test_kill_9_mid_export_recovers_by_lease_and_succeeds_once(self):
        self.kill_9_mid_export(self.cluster({"provider": {"read-timeout-ms": 30000}}))

    def test_kill_9_mid_export_on_mariadb(self):
        """The same kill -9 with the center's tables in MariaDB (database.kind
        mysql): claim, lease recovery, outbox and reconciler on MySQL SQL."""
        url = self.throwaway_server("test-mariadb.sh", "ec-rel-maria-")
        c = self.cluster({"database": {"kind": "mysql", "mysql-url": url},
                          "provider": {"read-timeout-ms": 30000}}, start_center=False)
        migrate = [os.path.join(c.build_dir, "export-center"), "migrate", "--config", c.config]
        for _ in range(2):  # idempotent
            out = subprocess.run(migrate, capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("schema is up to date (mysql)", out.stdout)
        c.start_center()
        self.kill_9_mid_export(c)
        self.assertEqual(c.db().kind, "mysql")
        self.assertFalse(os.path.exists(os.path.join(c.dir, "center.db")), "no SQLite beside it")

    def kill_9_mid_export(self, c):
        # The first batch hangs 20 s (read timeout 30 s): the attempt is mid-export
        # when the center dies.
        c.faults(hangMs=20000, hangCount=1)
        params = {"keyword": "科技"}
        task_id = self.create(c, params)
        self.wait_running(c, task_id)
        deadline = time.time() + 10
        while c.provider_stats()["batchCalls"] < 1 and time.time() < deadline:
            time.sleep(0.05)
        self.assertGreaterEqual(c.provider_stats()["batchCalls"], 1)
        before = c.task_row(task_id)
        self.assertEqual((before["status"], before["dispatch_version"]), ("RUNNING", 1))
        # The attempt has opened its object: the kill leaves a partial temp
        # file behind, which must not survive as an orphan.
        partial = c.stored_files()
        self.assertEqual(len(partial), 1, partial)
        self.assertIn(".tmp-", partial[0])

        c.kill_center()
        c.start_center()

        row = self.wait_terminal(c, task_id, timeout=LEASE_SECONDS + 40)
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertEqual(row["dispatch_version"], 2, "one lease recovery, version+1")
        self.assertEqual(row["attempt_count"], 2)
        outbox = c.outbox_rows(task_id)
        self.assertEqual([o["dispatch_version"] for o in outbox], [1, 2])
        self.assertNotIn("QUARANTINED", [o["status"] for o in outbox])
        self.assert_cells(c, task_id, params)
        self.assert_only_files_of(c, [task_id])

    # ---- 2. provider 503 twice ------------------------------------------------------

    def test_provider_503_twice_then_success_honours_backoff(self):
        c = self.cluster()
        c.faults(fail503=2)
        params = {"keyword": "物流"}
        task_id = self.create(c, params)
        # Each claim overwrites started_at; record every distinct value.
        starts = []
        deadline = time.time() + 60
        while time.time() < deadline:
            row = c.task_row(task_id)
            if row["started_at"] is not None and row["started_at"] not in starts:
                starts.append(row["started_at"])
            if row["status"] not in ("PENDING", "RUNNING"):
                break
            time.sleep(0.05)
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertEqual(row["attempt_count"], 3)
        self.assertEqual(row["dispatch_version"], 3)
        self.assertEqual(len(starts), 3, starts)
        outbox = c.outbox_rows(task_id)
        self.assertEqual([o["dispatch_version"] for o in outbox], [1, 2, 3])
        for step, retry_row, prev_start, start in zip(BACKOFF_STEPS, outbox[1:], starts,
                                                      starts[1:]):
            # The retry's row is due back-off after the failure (jitter ±20 %;
            # created_at is taken a statement after the task's next_retry_at)...
            delay = retry_row["next_retry_at"] - retry_row["created_at"]
            self.assertGreaterEqual(delay, step * 1000 * 0.8 - 50, retry_row)
            self.assertLessEqual(delay, step * 1000 * 1.2 + 50, retry_row)
            # ...and the next attempt really started no earlier.
            self.assertGreaterEqual(start, retry_row["next_retry_at"])
            self.assertGreaterEqual(start - prev_start, step * 1000 * 0.8, starts)
        self.assertEqual(c.provider_stats()["fail503Pending"], 0)
        self.assert_cells(c, task_id, params)
        self.assert_only_files_of(c, [task_id])

    # ---- 3. provider 503 forever -----------------------------------------------------

    def test_provider_503_forever_fails_after_max_attempts_without_dlq(self):
        c = self.cluster()
        c.faults(fail503=1000000)
        task_id = self.create(c, {"keyword": "贸易"})
        row = self.wait_terminal(c, task_id, timeout=60)
        self.assertEqual(row["status"], "FAILED", row)
        self.assertEqual(row["attempt_count"], 3)
        self.assertEqual(row["max_attempts"], 3)
        self.assertEqual(row["failure_message"], "The data source was unavailable", row)
        self.assertRegex(c.log(), rf"task {task_id} v3: attempt failed failure_code=\S+ "
                                  r"origin=source: .*503")
        outbox = c.outbox_rows(task_id)
        self.assertEqual([o["dispatch_version"] for o in outbox], [1, 2, 3])
        self.assertEqual({o["status"] for o in outbox}, {"SENT"})
        metrics = c.metrics()
        self.assertIn(DLQ_METRIC, metrics)
        self.assertEqual(metrics[DLQ_METRIC], 0)
        self.assertEqual(c.stored_files(), [], "a failed task leaves no file")

        def nothing_more():
            self.assertEqual(c.metrics()[DLQ_METRIC], 0)
            self.assertEqual(c.task_row(task_id)["status"], "FAILED")
            self.assertNotIn("QUARANTINED", [o["status"] for o in c.outbox_rows(task_id)])
            self.assertEqual(len(c.outbox_rows(task_id)), 3)

        hold(3 * RECONCILER_INTERVAL, nothing_more)

    # ---- 4. provider hangs past the read timeout ------------------------------------

    def test_provider_hang_past_read_timeout_is_transient_and_retried(self):
        c = self.cluster({"provider": {"read-timeout-ms": 1500}})
        c.faults(hangMs=5000, hangCount=1)
        params = {"keyword": "科技"}
        task_id = self.create(c, params)
        row = self.wait_terminal(c, task_id, timeout=60)
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertGreaterEqual(row["attempt_count"], 2)
        self.assertEqual(row["dispatch_version"], row["attempt_count"])
        outbox = c.outbox_rows(task_id)
        self.assertEqual(len(outbox), row["attempt_count"])
        self.assertEqual(c.provider_stats()["hangPending"], 0)
        self.assert_cells(c, task_id, params)
        self.assert_only_files_of(c, [task_id])

    # ---- 5. a command duplicated 10 times -----------------------------------------

    def test_command_duplicated_10_times_runs_once(self):
        c = self.cluster({"provider": {"read-timeout-ms": 30000}})
        c.faults(hangMs=12000, hangCount=1)
        params = {"keyword": "贸易"}
        task_id = self.create(c, params)
        self.wait_running(c, task_id)
        db = c.db()
        for k in range(10):
            sent = db.query("SELECT attempt_count FROM export_outbox WHERE task_id = ?"
                            " AND status = 'SENT'", (int(task_id),))
            deadline = time.time() + 10
            while not sent and time.time() < deadline:
                time.sleep(0.05)
                sent = db.query("SELECT attempt_count FROM export_outbox WHERE task_id = ?"
                                " AND status = 'SENT'", (int(task_id),))
            self.assertEqual(len(sent), 1, f"round {k}: the row is not SENT")
            changed = db.execute(
                f"UPDATE export_outbox SET status = 'PENDING', next_retry_at = {db.NOW},"
                " lease_owner = NULL, lease_until = NULL WHERE task_id = ? AND status = 'SENT'",
                (int(task_id),))
            self.assertEqual(changed, 1)
            want = sent[0]["attempt_count"] + 1
            deadline = time.time() + 10
            while time.time() < deadline:
                now = db.query("SELECT status, attempt_count FROM export_outbox"
                               " WHERE task_id = ?", (int(task_id),))
                if now[0]["status"] == "SENT" and now[0]["attempt_count"] == want:
                    break
                time.sleep(0.05)
            self.assertEqual((now[0]["status"], now[0]["attempt_count"]), ("SENT", want))
        row = c.task_row(task_id)
        self.assertEqual((row["status"], row["dispatch_version"]), ("RUNNING", 1),
                         "the duplicates must arrive while the first delivery runs")
        # Every duplicate reached a consumer and was acknowledged unclaimed.
        pattern = re.compile(rf"task {task_id} v1 event \S+: not claimed")
        deadline = time.time() + 10
        while len(pattern.findall(c.log())) < 10 and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(len(pattern.findall(c.log())), 10)

        row = self.wait_terminal(c, task_id, timeout=60)
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertEqual(row["attempt_count"], 1)
        self.assertEqual(row["dispatch_version"], 1)
        outbox = c.outbox_rows(task_id)
        self.assertEqual(len(outbox), 1)
        self.assertEqual(outbox[0]["attempt_count"], 11)
        self.assert_cells(c, task_id, params)
        self.assert_only_files_of(c, [task_id])

    # ---- 6. a poison command ----------------------------------------------------------

    def test_poison_command_is_quarantined_failed_and_never_resent(self):
        # sent-stale 2 s: were QUARANTINED not excluded, the reconciler would
        # re-send the row within the observation window.
        stale = {"reconciler": {"sent-stale-seconds": 2}}
        c = self.cluster(deep_merge(stale, {"publisher": {"enabled": False}}))
        task_id = self.create(c, {"keyword": "科技"})
        outbox = c.outbox_rows(task_id)
        self.assertEqual([(o["status"], o["attempt_count"]) for o in outbox], [("PENDING", 0)])
        c.stop_center()
        changed = c.db().execute("UPDATE export_outbox SET payload_json = ? WHERE task_id = ?",
                                 ('{"schemaVersion": 1, "taskId": ', int(task_id)))
        self.assertEqual(changed, 1)
        c.write_config(deep_merge(FAST, stale))
        c.start_center()

        deadline = time.time() + 30
        while time.time() < deadline and c.outbox_rows(task_id)[0]["status"] != "QUARANTINED":
            time.sleep(0.1)
        outbox = c.outbox_rows(task_id)
        self.assertEqual(len(outbox), 1)
        self.assertEqual(outbox[0]["status"], "QUARANTINED", outbox)
        sends = outbox[0]["attempt_count"]
        self.assertEqual(sends, 1, "sent once, redelivered by the channel, never re-sent")
        row = c.task_row(task_id)
        self.assertEqual(row["status"], "FAILED", row)
        self.assertEqual(row["failure_code"], "COMMAND_QUARANTINED")
        self.assertEqual(row["dispatch_version"], 1)
        self.assertEqual(row["attempt_count"], 0, "a poison command never runs")
        self.assertEqual(c.metrics()[DLQ_METRIC], 1)

        def never_resent():
            rows = c.outbox_rows(task_id)
            self.assertEqual(len(rows), 1, "no new command row")
            self.assertEqual((rows[0]["status"], rows[0]["attempt_count"]),
                             ("QUARANTINED", sends))
            self.assertEqual(c.task_row(task_id)["status"], "FAILED")
            self.assertEqual(c.metrics()[DLQ_METRIC], 1)

        hold(2 + 4 * RECONCILER_INTERVAL, never_resent)

    # ---- 7. starvation regression ------------------------------------------------------

    def test_queued_task_past_sent_stale_is_resent_same_version_and_runs(self):
        c = self.cluster({"consumer": {"concurrency": 1},
                          "reconciler": {"sent-stale-seconds": 2, "redispatch-grace-seconds": 1},
                          "provider": {"read-timeout-ms": 30000}})
        c.faults(hangMs=10000, hangCount=1)
        first_params, second_params = {"keyword": "科技"}, {"keyword": "物流"}
        first = self.create(c, first_params)
        self.wait_running(c, first)
        second = self.create(c, second_params)
        # While the only consumer is busy, the second command waits in the queue;
        # the reconciler counts it lost and re-sends the same row, same version.
        deadline = time.time() + 9
        resent = False
        while time.time() < deadline and not resent:
            rows = c.outbox_rows(second)
            self.assertEqual([o["dispatch_version"] for o in rows], [1])
            resent = rows[0]["attempt_count"] >= 2
            if not resent:
                time.sleep(0.1)
        self.assertTrue(resent, "the queued command was not re-sent after sent-stale-seconds")
        row = c.task_row(second)
        self.assertEqual((row["status"], row["dispatch_version"], row["attempt_count"]),
                         ("PENDING", 1, 0))
        self.assertEqual(c.task_row(first)["status"], "RUNNING")

        a = self.wait_terminal(c, first, timeout=60)
        b = self.wait_terminal(c, second, timeout=60)
        self.assertEqual(a["status"], "SUCCEEDED", a)
        self.assertEqual(b["status"], "SUCCEEDED", b)
        self.assertEqual((b["dispatch_version"], b["attempt_count"]), (1, 1))
        self.assertGreaterEqual(b["started_at"], a["completed_at"], "it ran after the first")
        self.assertEqual([o["dispatch_version"] for o in c.outbox_rows(second)], [1])
        self.assert_cells(c, first, first_params)
        self.assert_cells(c, second, second_params)
        self.assert_only_files_of(c, [first, second])

    # ---- 8. a process clock 5 minutes ahead ------------------------------------------

    def test_clock_5_minutes_ahead_steals_no_live_lease(self):
        lib = next((p for p in FAKETIME_LIBS if os.path.exists(p)), None)
        if lib is None:
            # In CI the test script installs it: a skip there would hide a broken install.
            if os.environ.get("CI", "false") not in ("", "false"):
                self.fail("libfaketime is not installed (scripts/install-deps.sh)")
            self.skipTest("libfaketime is not installed (scripts/install-deps.sh)")
        url = self.throwaway_server("test-postgres.sh", "ec-rel-pg-")
        # A runs exports; its reconciler is off so that every reconciler action
        # below is B's (B's log names what it did).
        c = self.cluster({"database": {"kind": "postgres", "postgres-url": url},
                          "instance-id": "center-a",
                          "reconciler": {"enabled": False},
                          "provider": {"read-timeout-ms": 30000}})
        c.faults(hangMs=16000, hangCount=1)
        params = {"keyword": "科技"}
        task_id = self.create(c, params)
        running = self.wait_running(c, task_id)
        self.assertEqual((running["lease_owner"], running["dispatch_version"]), ("center-a", 1))

        env = {"LD_PRELOAD": lib, "FAKETIME": "+5m", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
               "DONT_FAKE_MONOTONIC": "1"}
        skew = subprocess.check_output(["date", "+%s"], env={**os.environ, **env}, text=True)
        self.assertGreater(int(skew) - time.time(), 290, "libfaketime did not move the clock")

        # Positive control: a second RUNNING task (a copy of the first) whose
        # owner vanished and whose lease ends 4 s from now in database time. B
        # must leave it alone for those 4 s — its own clock says the lease ended
        # 5 minutes ago — and recover it right after.
        db = c.db()
        ghost = int(task_id) + 7
        db.execute("CREATE TEMP TABLE ghost AS SELECT * FROM export_task WHERE id = ?;"
                   f" UPDATE ghost SET id = ?, lease_owner = 'vanished-instance',"
                   f" lease_until = {db.NOW} + 4000, last_heartbeat_at = {db.NOW};"
                   " INSERT INTO export_task SELECT * FROM ghost",
                   (int(task_id), ghost))
        ghost_lease_until = c.task_row(ghost)["lease_until"]

        c.start_extra_center({"consumer": {"enabled": False}, "publisher": {"enabled": False},
                              "reconciler": {"enabled": True, "interval-seconds": 1}},
                             name="center-b", env=env)
        b_start = re.search(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", c.log("center-b.log"))
        self.assertIsNotNone(b_start, "center-b logged nothing")
        b_now = time.mktime(time.strptime(b_start.group(1), "%Y-%m-%d %H:%M:%S"))
        self.assertGreater(b_now - time.time(), 240, "center-b does not run 5 minutes ahead")

        def lease_kept():
            row = c.task_row(task_id)
            self.assertEqual(row["dispatch_version"], 1, row)
            if row["status"] == "RUNNING":
                self.assertEqual(row["lease_owner"], "center-a", row)
            else:
                self.assertEqual(row["status"], "SUCCEEDED", row)

        # The ghost is recovered by B, by the database clock...
        deadline = time.time() + 20
        while time.time() < deadline and c.task_row(ghost)["dispatch_version"] == 1:
            lease_kept()
            time.sleep(0.1)
        recovered = c.task_row(ghost)
        self.assertEqual(recovered["dispatch_version"], 2, "center-b recovered nothing")
        self.assertGreaterEqual(recovered["next_retry_at"], ghost_lease_until,
                                "a lease was taken before it ended in database time")
        self.assertRegex(c.log("center-b.log"), rf"task {ghost} v1: lease expired")
        # ...and A's live lease survives several more of B's rounds.
        hold(4 * 1, lease_kept)
        self.assertEqual(c.task_row(task_id)["status"], "RUNNING", "the hang ended too early")
        self.assertIsNone(c.extra[0].poll(), "center-b died")
        self.assertNotRegex(c.log("center-b.log"), rf"task {task_id} v1: lease expired")

        row = self.wait_terminal(c, task_id, timeout=60)
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertEqual((row["dispatch_version"], row["attempt_count"]), (1, 1))
        self.assertEqual(len(c.outbox_rows(task_id)), 1)
        ghost_row = self.wait_terminal(c, ghost, timeout=60)  # A runs its version 2
        self.assertEqual(ghost_row["status"], "SUCCEEDED", ghost_row)
        self.assert_cells(c, task_id, params)
        self.assert_cells(c, ghost, params)
        self.assert_only_files_of(c, [task_id, ghost])


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
