"""Soak (docs/guarantees.md#how-the-guarantees-are-tested): 500 exports by 50 users in bursts while the center is
kill -9'ed and restarted at random.

The customer service holds 3000 customers; every export has its own small
parameters (a customer-code prefix that selects about ten customers, or a
city+word name fragment), users retry on 429 and on a dead connection, and a
background thread kills and restarts the center a bounded number of times.
At the end every task must be terminal, every SUCCEEDED task must have
exactly one file whose rows equal the provider's for the task's own
parameters, and no file — temp files of killed attempts included — may exist
without its SUCCEEDED task. The figures are printed.

With --channel rocketmq the commands go through a real RocketMQ broker
(scripts/test-rocketmq.sh) instead of the in-process queue: a killed center's
unacknowledged commands come back from the broker, not from the outbox.

Run: /usr/bin/python3 soak_test.py BUILD_DIR [--channel embedded|rocketmq]
"""
import collections
import http.client
import json
import os
import random
import sys
import threading
import time
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from harness import Cluster, ScriptServer, deep_merge, rocketmq_channel  # noqa: E402

BUILD_DIR = None
CHANNEL = "embedded"

USERS = 50
EXPORTS_PER_USER = 10
KILLS = 6
SEED_CUSTOMERS = 3000
# Every provider batch call takes this long, so that exports overlap the kills
# (without it the 500 exports finish in a few seconds, before most kills).
PROVIDER_LATENCY_MS = 300

CONFIG = {
    "consumer": {"lease-seconds": 10, "heartbeat-seconds": 1, "max-duration-seconds": 120,
                 "retry-backoff-seconds": [1, 2], "shutdown-grace-seconds": 2},
    # A killed publisher's CLAIMED rows come back after this lease.
    "publisher": {"poll-interval-ms": 200, "lease-seconds": 5, "backoff-seconds": [1]},
    "reconciler": {"interval-seconds": 1, "redispatch-grace-seconds": 1,
                   "sent-stale-seconds": 10},
    "provider": {"read-timeout-ms": 5000},
    # The default of 5 active tasks per export type would make 500 exports of
    # one type crawl (and the test mostly measure 429 retries); 50 keeps the
    # per-user limit (3) and the 429 path busy while finishing in time.
    "limits": {"max-active-per-type": 50},
    "definitions": {"CUSTOMER_LIST": {"batch-size": 100}},
}

CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "南京", "苏州", "西安", "重庆",
          "天津"]
WORDS = ["华", "盛", "鑫", "泰", "恒", "瑞", "安", "达", "信", "联", "通", "创", "远", "嘉", "宏"]


def parameters_for(k):
    """Distinct small parameters for export k (0..499)."""
    if k < SEED_CUSTOMERS // 10:
        return {"keyword": f"CUS{k:07d}"}  # codes CUS{k:07d}0..9: about ten customers
    j = k - SEED_CUSTOMERS // 10
    params = {"keyword": CITIES[j % len(CITIES)] + WORDS[(j // len(CITIES)) % len(WORDS)]}
    if j >= len(CITIES) * len(WORDS):
        params["status"] = "ACTIVE"
    return params


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = collections.Counter()

    def add(self, name, n=1):
        with self.lock:
            self.values[name] += n


class Soak(unittest.TestCase):
    def overrides(self):
        if CHANNEL == "embedded":
            return CONFIG
        mq = ScriptServer("test-rocketmq.sh", "ec-soak-broker-")
        self.addCleanup(mq.stop)  # after the cluster's cleanup (LIFO)
        return deep_merge(CONFIG, rocketmq_channel(mq.start(), "soak-"))

    def test_500_exports_50_users_with_random_kills(self):
        c = Cluster(BUILD_DIR, seed=SEED_CUSTOMERS, overrides=self.overrides(), prefix="ec-soak-",
                    snapshot_binaries=True)
        self.addCleanup(c.cleanup)
        if CHANNEL == "rocketmq":
            c.rocketmq_init()
        c.start()
        c.faults(hangMs=PROVIDER_LATENCY_MS, hangCount=1000000)
        users = [(f"soak-u{n:02d}", "1" if n % 2 == 0 else "2") for n in range(USERS)]
        tokens = {u: c.token(u, tenant) for u, tenant in users}
        plan = {u: [parameters_for(n * EXPORTS_PER_USER + i) for i in range(EXPORTS_PER_USER)]
                for n, (u, _) in enumerate(users)}
        self.assertEqual(len({json.dumps(p, sort_keys=True) for ps in plan.values() for p in ps}),
                         USERS * EXPORTS_PER_USER, "parameters must be distinct")
        counters = Counters()
        errors = []
        submitting = threading.Event()
        submitting.set()
        kills_done = []

        def submit(user):
            rng = random.Random(user)
            time.sleep(rng.uniform(0, 8))  # users arrive over a few seconds
            burst = 0
            for params in plan[user]:
                deadline = time.time() + 240
                while True:
                    if time.time() > deadline:
                        errors.append(f"{user}: could not submit {params}")
                        return
                    try:
                        r = c.api("POST", "/export-tasks", tokens[user],
                                  {"exportType": "CUSTOMER_LIST", "parameters": params})
                        reply = r.json()
                    except (OSError, http.client.HTTPException, ValueError):
                        counters.add("connection_retries")  # the center is being killed
                        time.sleep(0.3)
                        continue
                    if reply.get("code") == "200":
                        counters.add("submitted")
                        break
                    if reply.get("code") == "429":
                        counters.add("retries_429")
                        time.sleep(rng.uniform(0.2, 0.8))
                        continue
                    errors.append(f"{user}: unexpected reply {reply}")
                    return
                burst += 1
                if burst >= rng.randint(2, 4):  # bursts of a few, then a pause
                    burst = 0
                    time.sleep(rng.uniform(0.5, 3))

        def killer():
            rng = random.Random(4242)
            try:
                while len(kills_done) < KILLS and submitting.is_set():
                    pause = rng.uniform(3, 6)
                    end = time.time() + pause
                    while time.time() < end and submitting.is_set():
                        time.sleep(0.1)
                    if not submitting.is_set():
                        break
                    c.kill_center()
                    kills_done.append(time.time())
                    c.start_center()
            except Exception as e:  # noqa: BLE001 - reported by the main thread
                errors.append(f"killer: {e!r}")

        started = time.time()
        threads = [threading.Thread(target=submit, args=(u,), daemon=True) for u, _ in users]
        kill_thread = threading.Thread(target=killer, daemon=True)
        for t in threads:
            t.start()
        kill_thread.start()
        for t in threads:
            t.join(timeout=400)
        submitting.clear()
        kill_thread.join(timeout=120)
        submitted_at = time.time()
        self.assertEqual(errors, [])
        self.assertFalse(any(t.is_alive() for t in threads), "submitters did not finish")
        self.assertEqual(counters.values["submitted"], USERS * EXPORTS_PER_USER)
        if c.center is None or c.center.poll() is not None:
            c.start_center()

        # ---- every task reaches a terminal state ----------------------------------
        db = c.db()
        deadline = time.time() + 180
        while time.time() < deadline:
            active = db.query("SELECT COUNT(*) AS n FROM export_task"
                              " WHERE status IN ('PENDING', 'RUNNING')")[0]["n"]
            if active == 0:
                break
            time.sleep(0.5)
        finished = time.time()
        tasks = db.query("SELECT id, tenant_id, requested_by, parameters_json, status,"
                         " object_key, attempt_count, dispatch_version, failure_code,"
                         " failure_message FROM export_task ORDER BY id")
        by_status = collections.Counter(t["status"] for t in tasks)
        self.assertEqual([t for t in tasks if t["status"] in ("PENDING", "RUNNING")], [],
                         "tasks still active")
        # A create whose reply was lost to a kill may have been submitted twice.
        self.assertGreaterEqual(len(tasks), USERS * EXPORTS_PER_USER)
        submitted = {(u, json.dumps(p, sort_keys=True)) for u, ps in plan.items() for p in ps}
        created = {(t["requested_by"], json.dumps(json.loads(t["parameters_json"]),
                                                   sort_keys=True)) for t in tasks}
        self.assertEqual(created, submitted)
        failed = [t for t in tasks if t["status"] != "SUCCEEDED"]
        for t in failed:
            # Only a task whose attempts were all killed may fail (lease lost).
            self.assertEqual((t["status"], t["failure_code"]), ("FAILED", "LEASE_LOST"), t)

        # ---- files: one per SUCCEEDED task, nothing else ----------------------------
        succeeded = [t for t in tasks if t["status"] == "SUCCEEDED"]
        keys = sorted(t["object_key"] for t in succeeded)
        self.assertEqual(len(set(keys)), len(keys))
        deadline = time.time() + 6  # a few reconciler rounds for leftovers of killed attempts
        files = c.stored_files()
        while files != keys and time.time() < deadline:
            time.sleep(0.2)
            files = c.stored_files()
        orphans = sorted(set(files) - set(keys))
        missing = sorted(set(keys) - set(files))
        self.assertEqual(missing, [], "SUCCEEDED tasks without their file")

        # ---- every file equals the provider's rows for its parameters ------------------
        provider_db = os.path.join(c.dir, "customers.db")
        root = c.storage_root
        rows_total = 0
        for t in succeeded:
            params = json.loads(t["parameters_json"])
            expected = customer_data.expected_rows(provider_db, t["tenant_id"], params)
            wb = openpyxl.load_workbook(os.path.join(root, t["object_key"]), read_only=True)
            rows = list(wb.worksheets[0].iter_rows(values_only=True))
            wb.close()
            self.assertEqual(list(rows[0]), customer_data.TITLES, t["id"])
            self.assertEqual(len(rows) - 1, len(expected), (t["id"], params))
            for got, want in zip(rows[1:], expected):
                for g, w in zip(got, want):
                    self.assertTrue(customer_data.same_cell(g, w), (t["id"], got, want))
            rows_total += len(expected)

        total = finished - started
        retries = sum(max(0, t["attempt_count"] - 1) for t in tasks)
        print(f"\nsoak figures ({CHANNEL} channel): tasks {len(tasks)} (submitted {USERS * EXPORTS_PER_USER} by"
              f" {USERS} users), kills {len(kills_done)}, succeeded {by_status['SUCCEEDED']},"
              f" failed {by_status['FAILED']}, other {len(tasks) - len(succeeded) - by_status['FAILED']},"
              f" rows exported {rows_total}, provider latency {PROVIDER_LATENCY_MS} ms per"
              f" batch, total {total:.1f} s (submitting"
              f" {submitted_at - started:.1f} s), {len(tasks) / total * 60:.0f} exports/min,"
              f" retries {retries} (sum of attempt_count-1), 429 retries"
              f" {counters.values['retries_429']}, connection retries"
              f" {counters.values['connection_retries']}, orphan files {len(orphans)}",
              file=sys.stderr)
        self.assertEqual(len(kills_done), KILLS, "the center was killed fewer times than planned")
        self.assertGreater(retries, 0, "no kill hit a running export: nothing was recovered")
        by_id = {str(t["id"]): t for t in tasks}
        self.assertEqual([(o, by_id.get(o.split("/")[4])) for o in orphans], [],
                         "files (or temp files) without a SUCCEEDED task")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    if len(sys.argv) > 2 and sys.argv[1] == "--channel":
        CHANNEL = sys.argv[2]
        del sys.argv[1:3]
    assert CHANNEL in ("embedded", "rocketmq"), CHANNEL
    unittest.main(verbosity=2)
