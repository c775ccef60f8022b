"""channel.kind: rocketmq with real processes (docs/deploy.md#rocketmq).

Each test starts its own PostgreSQL (scripts/test-postgres.sh), RocketMQ
NameServer + broker (scripts/test-rocketmq.sh), the sample customer service
and one or two export-centers (build/ binaries) in temp folders, runs
`export-center rocketmq init`, injects one fault — two instances in one
consumer group, a poison command, a broker killed with kill -9 mid-run, an
instance killed with kill -9 mid-export — and asserts the product's promise
from the database rows, the files on disk and the instances' logs. Every
server is stopped by its own pid.

Run: /usr/bin/python3 rocketmq_test.py BUILD_DIR [-k NAME]
"""
import os
import re
import sys
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(__file__))
from harness import Cluster, ScriptServer, deep_merge, rocketmq_channel  # noqa: E402

BUILD_DIR = None

LEASE_SECONDS = 10
RECONCILER_INTERVAL = 1

FAST = {
    "consumer": {"lease-seconds": LEASE_SECONDS, "heartbeat-seconds": 1,
                 "max-duration-seconds": 120, "retry-backoff-seconds": [1, 2],
                 "shutdown-grace-seconds": 2},
    "publisher": {"poll-interval-ms": 200, "backoff-seconds": [1]},
    "reconciler": {"interval-seconds": RECONCILER_INTERVAL, "redispatch-grace-seconds": 1,
                   "sent-stale-seconds": 60},
    "provider": {"read-timeout-ms": 30000},
    "limits": {"max-active-per-type": 100, "max-active-per-user": 100},
    "definitions": {"CUSTOMER_LIST": {"batch-size": 100}},
}

DLQ_METRIC = "export_dlq_messages_total"
ATTEMPT_ENDED = re.compile(r"task (\d+) v(\d+) type \S+ tenant \S+: attempt ended (\S+)")


def hold(seconds, check, interval=0.2):
    """Asserts check() at every poll for `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        check()
        time.sleep(interval)
    check()


class RocketMq(unittest.TestCase):
    def setUp(self):
        self.started = time.time()

    def tearDown(self):
        print(f"\n  [{self.id().split('.')[-1]}: {time.time() - self.started:.1f}s]",
              file=sys.stderr)

    # ---- helpers ---------------------------------------------------------------

    def servers(self):
        """PostgreSQL and RocketMQ, started in parallel-safe temp folders."""
        pg = ScriptServer("test-postgres.sh", "ec-mq-pg-")
        self.addCleanup(pg.stop)
        mq = ScriptServer("test-rocketmq.sh", "ec-mq-broker-")
        self.addCleanup(mq.stop)
        return pg.start(), mq.start(), mq

    def cluster(self, overrides=None, seed=1000):
        url, namesrv, mq = self.servers()
        # A prefix of its own: nothing of another run can reach this one.
        prefix = f"it-{uuid.uuid4().hex[:8]}-"
        base = deep_merge(FAST, {"database": {"kind": "postgres", "postgres-url": url}})
        base = deep_merge(base, rocketmq_channel(namesrv, prefix))
        c = Cluster(BUILD_DIR, seed=seed, overrides=deep_merge(base, overrides),
                    prefix="ec-mq-", snapshot_binaries=True)
        self.addCleanup(c.cleanup)  # before the servers stop (cleanups run LIFO)
        out = c.rocketmq_init()
        self.assertIn(prefix + "export-center-command-v1", out)
        c.start_provider()
        self.token = c.token("mq-user", "1")
        self.mq = mq
        return c

    def create(self, c, parameters, token=None):
        r = c.create(token or self.token, parameters=parameters)
        self.assertEqual(r["code"], "200", r)
        return r["data"]["id"]

    def wait_all_terminal(self, c, ids, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = [c.task_row(t) for t in ids]
            if all(r["status"] not in ("PENDING", "RUNNING") for r in rows):
                return rows
            time.sleep(0.2)
        self.fail(f"tasks not terminal in {timeout}s: "
                  f"{[(r['id'], r['status']) for r in rows if r['status'] in ('PENDING', 'RUNNING')]}")

    def assert_one_file_each(self, c, ids, rounds=4):
        want = sorted(c.task_row(t)["object_key"] for t in ids)
        self.assertEqual(len(set(want)), len(ids))
        deadline = time.time() + rounds * RECONCILER_INTERVAL + 2
        files = c.stored_files()
        while files != want and time.time() < deadline:
            time.sleep(0.2)
            files = c.stored_files()
        self.assertEqual(files, want, "files on disk other than one per SUCCEEDED task")

    @staticmethod
    def attempts_in(log):
        return [(int(t), int(v), end) for t, v, end in ATTEMPT_ENDED.findall(log)]

    # ---- 1. two instances in one consumer group --------------------------------------

    def test_two_instances_share_the_queues_and_each_command_runs_once(self):
        c = self.cluster()
        c.start_center()
        c.start_extra_center({}, name="center-b")
        # Each batch takes a while, so both instances are busy at once.
        c.faults(hangMs=200, hangCount=1000000)
        keywords = ["科技", "物流", "贸易", "CUS00001", "CUS00002", "CUS00003"]
        ids = [self.create(c, {"keyword": keywords[i % len(keywords)]},
                           token=c.token(f"mq-u{i}", "1")) for i in range(24)]
        rows = self.wait_all_terminal(c, ids, timeout=120)
        for r in rows:
            self.assertEqual((r["status"], r["attempt_count"], r["dispatch_version"]),
                             ("SUCCEEDED", 1, 1), r)
        for t in ids:
            outbox = c.outbox_rows(t)
            self.assertEqual([(o["status"], o["attempt_count"]) for o in outbox], [("SENT", 1)])
        a = self.attempts_in(c.log())
        b = self.attempts_in(c.log("center-b.log"))
        ran = sorted(t for t, _, _ in a + b)
        self.assertEqual(ran, sorted(int(t) for t in ids), "every command ran exactly once")
        self.assertGreater(len(a), 0, "the first instance got no queue")
        self.assertGreater(len(b), 0, "the second instance got no queue")
        print(f"\n  instance A ran {len(a)}, instance B ran {len(b)}", file=sys.stderr)
        self.assert_one_file_each(c, ids)

    # ---- 2. a poison command -----------------------------------------------------------

    def test_poison_goes_to_dlq_and_is_quarantined_from_its_properties(self):
        # sent-stale 2 s: were QUARANTINED not excluded, the reconciler would
        # re-send the row within the observation window.
        stale = {"reconciler": {"sent-stale-seconds": 2}}
        c = self.cluster(deep_merge(stale, {"publisher": {"enabled": False}}))
        c.start_center()
        task_id = self.create(c, {"keyword": "科技"})
        c.stop_center()
        changed = c.db().execute("UPDATE export_outbox SET payload_json = ? WHERE task_id = ?",
                                 ('{"schemaVersion": 1, "taskId": ', int(task_id)))
        self.assertEqual(changed, 1)
        c.write_config(deep_merge(c.overrides, {"publisher": {"enabled": True}}))
        c.start_center()

        deadline = time.time() + 90
        while time.time() < deadline and c.outbox_rows(task_id)[0]["status"] != "QUARANTINED":
            time.sleep(0.2)
        outbox = c.outbox_rows(task_id)
        self.assertEqual(len(outbox), 1)
        self.assertEqual(outbox[0]["status"], "QUARANTINED", outbox)
        # The reconciler may re-send the same payload (same version) before the
        # broker's redeliveries of the first send end in %DLQ% — allowed by the
        # design (docs/task-lifecycle.md#dead-letters-and-quarantine). What must
        # hold: one outbox row quarantined, the task FAILED once, each send
        # dead-lettered after the delivery limit, and no send after the quarantine.
        sends = outbox[0]["attempt_count"]
        self.assertGreaterEqual(sends, 1)
        row = c.task_row(task_id)
        self.assertEqual((row["status"], row["failure_code"]), ("FAILED", "COMMAND_QUARANTINED"))
        self.assertEqual((row["dispatch_version"], row["attempt_count"]), (1, 0))
        deadline = time.time() + 60
        while time.time() < deadline and c.metrics()[DLQ_METRIC] < sends:
            time.sleep(0.2)
        self.assertEqual(c.metrics()[DLQ_METRIC], sends, "one dead letter per send")
        log = c.log()
        # Each send delivered delivery-limit (3) times by the broker, then dead-lettered.
        self.assertEqual(sorted(re.findall(r"poison command \(delivery (\d)\)", log)),
                         sorted(["1", "2", "3"] * sends))
        # The quarantine line carries the decoder's own error (docs/rocketmq.md#undecodable-messages).
        self.assertRegex(log, rf"task {task_id} v1 event \S+: poison command quarantined "
                              r"\(message id \w+\): the export command could not be decoded: "
                              r"command is not JSON: .*parse error.* \(after 3 deliveries\)")

        def never_resent():
            rows = c.outbox_rows(task_id)
            self.assertEqual(len(rows), 1, "no new command row")
            self.assertEqual((rows[0]["status"], rows[0]["attempt_count"]),
                             ("QUARANTINED", sends))
            self.assertEqual(c.task_row(task_id)["status"], "FAILED")
            self.assertEqual(c.metrics()[DLQ_METRIC], sends)

        hold(2 + 4 * RECONCILER_INTERVAL, never_resent)

    # ---- 3. the broker killed mid-run ----------------------------------------------------

    def test_broker_kill_9_mid_run_and_restart_every_task_succeeds_once(self):
        c = self.cluster()
        c.start_center()
        c.faults(hangMs=300, hangCount=1000000)
        keywords = ["科技", "物流", "贸易", "CUS00001"]
        first = [self.create(c, {"keyword": keywords[i % 4]}, token=c.token(f"mq-k{i}", "1"))
                 for i in range(8)]
        # Some are running when the broker dies.
        deadline = time.time() + 30
        while time.time() < deadline and not any(
                c.task_row(t)["status"] == "RUNNING" for t in first):
            time.sleep(0.05)
        self.mq.run("kill")
        # Created while the broker is down: their rows stay PENDING and back off.
        second = [self.create(c, {"keyword": keywords[i % 4]}, token=c.token(f"mq-l{i}", "1"))
                  for i in range(8)]
        db = c.db()

        def send_failures():
            return db.query("SELECT COUNT(*) AS n FROM export_outbox WHERE status = 'PENDING'"
                            " AND attempt_count >= 1 AND last_error IS NOT NULL")[0]["n"]

        deadline = time.time() + 30
        while time.time() < deadline and send_failures() == 0:
            time.sleep(0.2)
        self.assertGreater(send_failures(), 0, "no send failed while the broker was down")
        time.sleep(3)  # a few more rounds of failing sends
        self.mq.run("restart")
        ids = first + second
        rows = self.wait_all_terminal(c, ids, timeout=180)
        for r in rows:
            self.assertEqual(r["status"], "SUCCEEDED", r)
        self.assertEqual(db.query("SELECT COUNT(*) AS n FROM export_outbox"
                                  " WHERE status <> 'SENT'")[0]["n"], 0)
        self.assertGreater(db.query("SELECT MAX(attempt_count) AS n FROM export_outbox")[0]["n"],
                           1, "some command was sent again after failing")
        ran = sorted(t for t, _, end in self.attempts_in(c.log()) if end == "SUCCEEDED")
        self.assertEqual(ran, sorted(int(t) for t in ids), "each task succeeded exactly once")
        self.assert_one_file_each(c, ids)

    # ---- 4. an instance killed mid-export ----------------------------------------------

    def test_instance_kill_9_mid_export_recovers_by_lease_over_the_broker(self):
        c = self.cluster()
        c.start_center()
        b, _ = c.start_extra_center({"instance-id": "center-b"}, name="center-b")
        c.faults(hangMs=20000, hangCount=1)
        params = {"keyword": "科技"}
        task_id = self.create(c, params)
        running = c.wait_row(task_id, lambda r: r["status"] == "RUNNING", timeout=30,
                             what="RUNNING")
        owner = running["lease_owner"]
        survivor_log = "center.log"
        if owner == "center-b":
            b.kill()
            b.wait(timeout=30)
        else:
            c.kill_center()
            survivor_log = "center-b.log"
        row = c.wait_row(task_id, lambda r: r["status"] not in ("PENDING", "RUNNING"),
                         timeout=LEASE_SECONDS + 60, what="a terminal state")
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertEqual((row["dispatch_version"], row["attempt_count"]), (2, 2),
                         "one lease recovery, version+1")
        outbox = c.outbox_rows(task_id)
        self.assertEqual([(o["dispatch_version"], o["status"]) for o in outbox],
                         [(1, "SENT"), (2, "SENT")])
        survivor = self.attempts_in(c.log(survivor_log))
        self.assertIn((int(task_id), 2, "SUCCEEDED"), survivor,
                      "the survivor ran version 2, delivered over the broker")
        self.assertRegex(c.log(survivor_log), rf"task {task_id} v1: lease expired")
        self.assert_one_file_each(c, [task_id])


    # ---- 5. a cluster with ACL on -------------------------------------------------------

    def test_acl_broker_signed_requests_work_and_refused_credentials_lose_nothing(self):
        """A broker with ACL 2.0 on (authentication + authorization): the
        secret from EXPORT_CENTER_ROCKETMQ_SECRET_KEY; a wrong one makes
        `rocketmq init` fail at once naming authentication, and `serve` keep
        the outbox row PENDING with that error until restarted with the right
        one, when the export runs."""
        user, secret = "center", "center-acl-secret"
        mq = ScriptServer("test-rocketmq.sh", "ec-mq-acl-")
        self.addCleanup(mq.stop)
        namesrv = mq.start(env={"EC_TEST_ROCKETMQ_AUTH": f"{user}:{secret}"})
        prefix = f"acl-{uuid.uuid4().hex[:8]}-"
        c = Cluster(BUILD_DIR, seed=1000, prefix="ec-mq-acl-", snapshot_binaries=True,
                    overrides=deep_merge(FAST, rocketmq_channel(namesrv, prefix,
                                                                **{"access-key": user})))
        self.addCleanup(c.cleanup)
        right = {"EXPORT_CENTER_ROCKETMQ_SECRET_KEY": secret}
        wrong = {"EXPORT_CENTER_ROCKETMQ_SECRET_KEY": "not-the-secret"}
        # The config names a key and no secret: every command that loads it
        # (`token` too) needs the variable; the runs below override it.
        os.environ.update(right)
        self.addCleanup(os.environ.pop, "EXPORT_CENTER_ROCKETMQ_SECRET_KEY", None)

        started = time.time()
        with self.assertRaises(RuntimeError) as refused:
            c.rocketmq_init(env=wrong)
        self.assertIn("authentication failed", str(refused.exception))
        self.assertIn("check signature failed", str(refused.exception))
        self.assertLess(time.time() - started, 30, "refused at once, not after init's wait")
        self.assertIn(prefix + "export-center-command-v1", c.rocketmq_init(env=right))

        c.start_provider()
        token = c.token("mq-user", "1")
        c.start_center(env=wrong)
        task_id = self.create(c, {"keyword": "科技"}, token)
        # The publisher retries every second (FAST): between its claims the
        # row is back to PENDING with the broker's refusal as its error.
        deadline = time.time() + 20
        waiting = None
        while waiting is None and time.time() < deadline:
            rows = c.outbox_rows(task_id)
            self.assertEqual(len(rows), 1)
            self.assertNotEqual(rows[0]["status"], "SENT")
            if rows[0]["status"] == "PENDING" and rows[0]["attempt_count"] >= 2:
                waiting = rows[0]
            time.sleep(0.1)
        self.assertIsNotNone(waiting, "nothing lost: the row waits, PENDING, retried")
        self.assertIn("authentication failed", waiting["last_error"])
        self.assertIn("check signature failed", waiting["last_error"])
        self.assertEqual(c.task_row(task_id)["status"], "PENDING")
        self.assertIn("RocketMQ authentication failed", c.log())

        c.stop_center()
        c.start_center(env=right)
        [row] = self.wait_all_terminal(c, [task_id], timeout=60)
        self.assertEqual(row["status"], "SUCCEEDED", row)
        self.assertEqual(c.outbox_rows(task_id)[0]["status"], "SENT")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
