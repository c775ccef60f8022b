"""The rolling upgrade and the rollback, two builds of the center on one database
(docs/deploy.md#upgrading and #rolling-back: this test follows those steps one by one).

The previous release (RELEASES; built by previous_release.py from its commit, cached
under BUILD_DIR/previous-release/) runs a fleet of two instances on PostgreSQL or
MariaDB, with RocketMQ, local shared storage and a webhook receiver. While users keep
creating exports through a balancer that routes to the instances in rotation:

  Upgrading (the doc's numbers)
            1. the new binary beside the old one (a copy of each in the test folder)
            2. the new binary's `check`: only the store step may fail, for being behind
            3. `migrate` by the new binary while the old fleet serves; then two long
               exports start on the old instances
            4. two new instances join the rotation once /readyz answers
            5. the old instances drain one at a time: out of the rotation, SIGTERM, wait
               for the exit (the long exports are handed back and end on the new ones)
            6. the new binary's `check`: every step ok
  Rolling back (two long exports first start on the new instances)
            1. the schema works with the previous release: every applied migration
               records a compatible_from it satisfies
            2. two old instances start on the new schema and join the rotation
            3. the new instances drain the same way (the old binary finishes the long
               exports the new one created and started)

Then the chaos check's rules (scripts/fleet.py, tests/integration/soak_test.py): every
submission has exactly one task and it SUCCEEDED; one file per task and no other file
(temp files of handed-back attempts included); every file equals the provider's rows for
the task's parameters, cell by cell; every task's webhook accepted exactly once; old and
new instances really ran each other's tasks (the timeline's CLAIMED events); files the
new release wrote download through the old one.

Run: /usr/bin/python3 rolling_upgrade_test.py BUILD_DIR --db postgres|mariadb
"""
import collections
import http.server
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import unittest
import uuid

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import customer_data  # noqa: E402
import previous_release  # noqa: E402
from harness import (API, Cluster, ScriptServer, deep_merge, free_port,  # noqa: E402
                     request, rocketmq_channel, wait_http)

BUILD_DIR = None
DB = "postgres"

SEED_CUSTOMERS = 3000  # tenant "1" holds 1800 of them, tenant "2" 1200
BATCH_MS = 2000  # every provider batch takes this long, so exports overlap the steps
CONFIG = {
    "consumer": {"concurrency": 4, "lease-seconds": 10, "heartbeat-seconds": 1,
                 "max-duration-seconds": 300, "retry-backoff-seconds": [1, 2],
                 "shutdown-grace-seconds": 2},
    "publisher": {"poll-interval-ms": 200, "lease-seconds": 5, "backoff-seconds": [1, 2]},
    "reconciler": {"interval-seconds": 1, "redispatch-grace-seconds": 1,
                   "sent-stale-seconds": 15},
    "provider": {"read-timeout-ms": 10000},
    "limits": {"max-active-per-type": 100},
    # 50 rows a batch (the least a definition may say): a small export is one batch, tenant
    # 1's whole list 36 (~72 s at BATCH_MS: it must outlast the rollback's schema check and
    # two instance starts on a loaded machine; at 1 s a batch a long export once finished on
    # a new instance before its drain while five builds shared the two cores).
    # A drain hands a running attempt back and that counts as an attempt
    # (docs/task-lifecycle.md): a long export can hop from one draining old instance to the
    # other, then to a new one drained by the rollback — three hand-backs, so the most
    # attempts a definition may have (docs/deploy.md#upgrading says so to operators).
    "definitions": {"CUSTOMER_LIST": {"batch-size": 50, "max-attempts": 5}},
}
# Four users, a pause of 1.5-3.5 s after each create: about 1.6 small exports a second of
# 2 s each keep ~3 of the fleet's 8 consumer slots busy, so the fleet keeps up (no queue)
# and a long export starts at once on the instances serving when it is created.
SUBMITTERS = 4
WEBHOOK_SECRET = "upgrade-webhook-secret-0123456789"
# The envelope's message for a transient failure (api/envelope.cc).
TRANSIENT = "service temporarily unavailable; please retry in a few seconds"

CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "南京", "苏州", "西安"]
WORDS = ["华", "盛", "鑫", "泰", "恒", "瑞", "安", "达", "信", "联", "通", "创"]


def small_parameters(k):
    """Distinct small parameters for submission k: about ten customers each."""
    if k < SEED_CUSTOMERS // 10:
        return {"keyword": f"CUS{k:07d}"}
    j = k - SEED_CUSTOMERS // 10
    params = {"keyword": CITIES[j % len(CITIES)] + WORDS[(j // len(CITIES)) % len(WORDS)]}
    status = ["", "ACTIVE", "INACTIVE", "FROZEN"][(j // (len(CITIES) * len(WORDS))) % 4]
    if status:
        params["status"] = status
    return params


def log(msg):
    print(f"upgrade: {msg}", file=sys.stderr, flush=True)


class Receiver:
    """The webhook receiver: answers 200 to every call and records it."""

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.calls.append(
                        {"event": self.headers.get("X-Export-Center-Event-Id", ""),
                         "body": body})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def snapshot(self):
        with self.lock:
            return list(self.calls)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Instance:
    """One `export-center serve` of a given binary with its own port and instance-id."""

    def __init__(self, cluster, binary, name):
        self.cluster = cluster
        self.binary = binary
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = cluster.write_config(
            deep_merge(cluster.overrides, {"server": {"port": self.port}, "instance-id": name}),
            path=os.path.join(cluster.dir, f"{name}.yaml"))
        with open(os.path.join(cluster.dir, f"{name}.log"), "ab") as out:
            self.proc = subprocess.Popen([binary, "serve", "--config", self.config], stdout=out,
                                         stderr=subprocess.STDOUT)

    def wait_ready(self):
        # /readyz: what the balancer routes on (docs/deploy.md).
        try:
            wait_http(self.url + "/readyz", self.proc, timeout=60, any_status=False)
        except RuntimeError as e:
            raise AssertionError(f"{self.name}: {e}\n{self.cluster.log(self.name + '.log')[-3000:]}")

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """SIGTERM and wait for the exit; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=timeout)
        return self.proc.returncode


class Balancer:
    """Routes each request to a random instance in rotation, as a load balancer
    that checks /readyz would; an instance is taken out before it is stopped."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rotation = []

    def add(self, instance):
        with self.lock:
            self.rotation.append(instance)

    def remove(self, instance):
        with self.lock:
            self.rotation.remove(instance)

    def pick(self, rng):
        with self.lock:
            return rng.choice(self.rotation)


class RollingUpgradeTest(unittest.TestCase):
    def setUp(self):
        started = time.time()
        self.old_version, self.old_commit, old_binary, built = previous_release.build(BUILD_DIR)
        log(f"previous release {self.old_version} ({self.old_commit[:12]}): "
            + (f"built in {built:.0f} s" if built else "cached"))
        self.receiver = Receiver()
        self.addCleanup(self.receiver.stop)
        self.instances = []
        self.addCleanup(self.stop_instances)
        db, mq = self.start_servers()
        database = ({"kind": "postgres", "postgres-url": db} if DB == "postgres"
                    else {"kind": "mysql", "mysql-url": db})
        prefix = f"up-{uuid.uuid4().hex[:8]}-"
        overrides = deep_merge(CONFIG, {"database": database})
        overrides = deep_merge(overrides, rocketmq_channel(mq, prefix))
        overrides = deep_merge(overrides, self.notifications())
        self.c = Cluster(BUILD_DIR, seed=SEED_CUSTOMERS, overrides=overrides, prefix="ec-upgrade-",
                         snapshot_binaries=True)
        self.addCleanup(self.c.cleanup)
        self.old = os.path.join(self.c.dir, "bin", "export-center-" + self.old_version)
        subprocess.run(["cp", old_binary, self.old], check=True)
        self.new = os.path.join(self.c.build_dir, "export-center")
        self.setup_seconds = time.time() - started

    def start_servers(self):
        """The database and the broker, started side by side."""
        db = ScriptServer("test-postgres.sh" if DB == "postgres" else "test-mariadb.sh",
                          "ec-upgrade-db-")
        mq = ScriptServer("test-rocketmq.sh", "ec-upgrade-mq-")
        self.addCleanup(db.stop)
        self.addCleanup(mq.stop)
        addresses = {}

        def start(name, server):
            addresses[name] = server.start()

        threads = [threading.Thread(target=start, args=("db", db)),
                   threading.Thread(target=start, args=("mq", mq))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(addresses), ["db", "mq"], "a server did not start")
        return addresses["db"], addresses["mq"]

    def notifications(self):
        return {"notifications": {
            "allowed-targets": [f"127.0.0.1:{self.receiver.port}"], "backoff-seconds": [1],
            "poll-interval-ms": 200, "lease-seconds": 5, "connect-timeout-ms": 500,
            "timeout-ms": 1000,
            "receivers": {"ops-hook": {"url": f"http://127.0.0.1:{self.receiver.port}/hook",
                                       "secret": WEBHOOK_SECRET}}}}

    def stop_instances(self):
        for inst in self.instances:
            if inst.proc.poll() is None:
                inst.proc.kill()
                inst.proc.wait(timeout=30)

    # ---- the steps ------------------------------------------------------------------

    def run_binary(self, binary, *args):
        r = subprocess.run([binary, *args, "--config", self.c.config], capture_output=True,
                           text=True, timeout=180)
        out = r.stdout + r.stderr
        if r.returncode != 0 and args != ("check",):
            # Printed at once: CI shows the start of a failed test's output, where an
            # assertion's message at the end may be cut off.
            log(f"{os.path.basename(binary)} {' '.join(args)} exited {r.returncode}:\n{out}")
        return r.returncode, out

    def start(self, binary, name):
        inst = Instance(self.c, binary, name)
        self.instances.append(inst)
        inst.wait_ready()
        self.balancer.add(inst)
        log(f"{name} serves")
        return inst

    def drain(self, inst):
        """Out of the rotation, then SIGTERM, then wait for the exit (docs/deploy.md)."""
        self.balancer.remove(inst)
        time.sleep(0.5)  # requests already routed to it finish
        begun = time.time()
        code = inst.stop()
        log(f"{inst.name} drained in {time.time() - begun:.1f} s")
        self.assertEqual(code, 0, f"{inst.name} exit code after SIGTERM")

    def phase(self, name, seconds=0):
        # A step ends only once an export was created during it (the check asserts one
        # per step): a quick step on a loaded machine could otherwise see none.
        previous, deadline = self.current_phase, time.time() + 30
        while previous != "setup" and time.time() < deadline:
            with self.lock:
                if any(s["phase"] == previous for s in self.submissions):
                    break
            time.sleep(0.1)
        self.current_phase = name
        log(f"phase {name}")
        time.sleep(seconds)

    def submitter(self, user, token, rng):
        """Creates exports until told to stop, each through an instance in rotation."""
        while not self.stop_submitting.is_set():
            with self.lock:
                k = self.next_k
                self.next_k += 1
            params = small_parameters(k)
            phase = self.current_phase
            deadline = time.time() + 120
            while True:
                if time.time() > deadline:
                    self.errors.append(f"{user}: could not submit {params}")
                    return
                inst = self.balancer.pick(rng)
                try:
                    r = request("POST", inst.url + API + "/export-tasks", token=token, timeout=30,
                                body={"exportType": "CUSTOMER_LIST", "parameters": params})
                    reply = r.json()
                except (OSError, ValueError):
                    # It was stopped between the pick and the request: another one.
                    self.counts["connection_retries"] += 1
                    time.sleep(0.2)
                    continue
                if reply.get("code") == "200":
                    with self.lock:
                        self.submissions.append({"user": user, "params": params,
                                                 "via": inst.name, "phase": phase,
                                                 "id": reply["data"]["id"]})
                    break
                if reply.get("code") == "429":
                    self.counts["retries_429"] += 1
                    time.sleep(rng.uniform(0.2, 0.6))
                    continue
                if reply.get("code") == "500" and TRANSIENT in (reply.get("message") or ""):
                    # The API's documented "retry in a few seconds" (a store call that met
                    # a lock the migration's DDL held past the statement's deadline): a
                    # client retries; the check below allows it only while `migrate` runs.
                    with self.lock:
                        self.transient_answers.append((phase, inst.name))
                    time.sleep(rng.uniform(0.5, 1.0))
                    continue
                self.errors.append(f"{user}: {inst.name} answered {reply}")
                return
            time.sleep(rng.uniform(1.5, 3.5))

    def create_long(self, via, user):
        """Tenant 1's whole list (36 batches, ~72 s) created through `via`: it runs on one
        of the instances serving when it is created and is still running at their drain."""
        token = self.c.token(user, "1")
        r = request("POST", via.url + API + "/export-tasks", token=token,
                    body={"exportType": "CUSTOMER_LIST", "parameters": {}}).json()
        self.assertEqual(r["code"], "200", r)
        with self.lock:
            self.submissions.append({"user": user, "params": {}, "via": via.name,
                                     "phase": self.current_phase, "id": r["data"]["id"]})
        return r["data"]["id"]

    def wait_running(self, task_ids, timeout=60):
        db = self.c.db()
        deadline = time.time() + timeout
        while time.time() < deadline:
            ids = ",".join(str(int(t)) for t in task_ids)
            rows = db.query(f"SELECT status FROM export_task WHERE id IN ({ids})")
            if all(r["status"] == "RUNNING" for r in rows):
                return
            time.sleep(0.1)
        self.fail(f"tasks {task_ids} not RUNNING in {timeout} s")

    def test_rolling_upgrade_then_rollback(self):
        c = self.c
        began = time.time()
        self.balancer = Balancer()
        self.lock = threading.Lock()
        self.submissions, self.errors = [], []
        self.counts = collections.Counter()
        self.transient_answers = []
        self.next_k = 0
        self.current_phase = "setup"
        self.stop_submitting = threading.Event()

        # ---- the previous release's fleet ------------------------------------------------
        code, out = self.run_binary(self.old, "migrate")
        self.assertEqual(code, 0, out)
        code, out = self.run_binary(self.old, "rocketmq", "init")
        self.assertEqual(code, 0, out)
        c.start_provider()
        c.faults(hangMs=BATCH_MS, hangCount=1000000)
        old_a = self.start(self.old, f"{self.old_version}-a")
        old_b = self.start(self.old, f"{self.old_version}-b")
        users = [(f"up-u{n}", "1" if n % 2 == 0 else "2") for n in range(SUBMITTERS)]
        threads = [threading.Thread(target=self.submitter,
                                    args=(u, c.token(u, t), random.Random(u)), daemon=True)
                   for u, t in users]
        self.phase("old fleet")
        for t in threads:
            t.start()
        time.sleep(4)

        # ---- Upgrading (docs/deploy.md#upgrading) -------------------------------------------
        # 2. check with the new binary: only the store step may fail, and only for being behind.
        self.phase("check")
        code, out = self.run_binary(self.new, "check")
        failed = [line for line in out.splitlines() if line.startswith("FAIL")]
        if any(not line.split()[1:2] == ["store"] for line in failed):
            log(f"check failed beyond the store step:\n{out}")
        for line in failed:
            self.assertRegex(line, r"^FAIL\s+store\s.*run `export-center migrate`", out)
        # 3. migrate with the new binary while the old fleet serves.
        self.phase("migrate")
        code, out = self.run_binary(self.new, "migrate")
        self.assertEqual(code, 0, out)
        self.assertIn("schema is up to date", out)
        # Long exports the old fleet runs on the new schema until its drain.
        long_on_old = [self.create_long(old_a, "up-long-old-1"),
                       self.create_long(old_b, "up-long-old-2")]
        self.wait_running(long_on_old)
        # 4. new instances join.
        self.phase("new instances join")
        new_a = self.start(self.new, "new-a")
        new_b = self.start(self.new, "new-b")
        self.phase("old and new side by side", 3)
        # 5. the old instances drain, one at a time.
        self.phase("old instances drain")
        self.drain(old_a)
        self.drain(old_b)
        self.phase("new fleet", 3)
        # 6. check with the new binary: every step ok.
        code, out = self.run_binary(self.new, "check")
        self.assertEqual(code, 0, out)

        # ---- Rolling back (docs/deploy.md#rolling-back) -------------------------------------
        # Long exports the new release creates and starts before the old one comes back.
        long_on_new = [self.create_long(new_a, "up-long-new-1"),
                       self.create_long(new_b, "up-long-new-2")]
        self.wait_running(long_on_new)
        # 1. the schema works with the previous release.
        self.phase("rollback check")
        self.assert_schema_works_with(self.old_version)
        # 2. old instances start on the new schema.
        self.phase("old instances return")
        back_a = self.start(self.old, f"{self.old_version}-c")
        back_b = self.start(self.old, f"{self.old_version}-d")
        # 3. the new instances drain.
        self.phase("new instances drain")
        self.drain(new_a)
        self.drain(new_b)
        self.phase("old fleet again", 4)
        self.stop_submitting.set()
        for t in threads:
            t.join(timeout=180)
        self.assertEqual(self.errors, [])
        # Outside the DDL window (a submission started in "check" may be answered while
        # `migrate` runs) no instance, old or new, may answer "temporarily unavailable".
        self.assertEqual([a for a in self.transient_answers if a[0] not in ("check", "migrate")],
                         [], "transient answers outside the migration")
        self.assertFalse(any(t.is_alive() for t in threads), "submitters did not finish")
        settled = self.wait_all_ended()
        self.verify([back_a, back_b], long_on_old, long_on_new)
        log(f"figures ({DB}, RocketMQ): previous release {self.old_version}, setup"
            f" {self.setup_seconds:.0f} s (old build included), steps until every task ended"
            f" {settled - began:.0f} s, whole test {time.time() - began + self.setup_seconds:.0f} s;"
            f" {len(self.submissions)} exports, per phase"
            f" {dict(collections.Counter(s['phase'] for s in self.submissions))},"
            f" 429 retries {self.counts['retries_429']}, connection retries"
            f" {self.counts['connection_retries']}, transient answers during migrate"
            f" {len(self.transient_answers)}")

    # ---- checks ---------------------------------------------------------------------------

    def assert_schema_works_with(self, release):
        """Rolling back, step 1: every applied migration records a compatible_from that
        `release` satisfies (docs/store.md#compatibility-rule)."""
        rows = self.c.db().query("SELECT version, description, compatible_from"
                                 " FROM export_schema_version ORDER BY version")
        self.assertTrue(rows)

        def parts(v):
            return tuple(int(p) for p in v.split("."))

        for r in rows:
            self.assertIsNotNone(r["compatible_from"], r)
            self.assertLessEqual(parts(r["compatible_from"]), parts(release), r)

    def wait_all_ended(self, timeout=240):
        db = self.c.db()
        deadline = time.time() + timeout
        while time.time() < deadline:
            n = db.query("SELECT COUNT(*) AS n FROM export_task"
                         " WHERE status IN ('PENDING', 'RUNNING')")[0]["n"]
            if n == 0:
                return time.time()
            time.sleep(0.5)
        self.fail(f"tasks still active after {timeout} s")

    def verify(self, serving, long_on_old, long_on_new):
        c, db = self.c, self.c.db()
        tasks = db.query("SELECT id, tenant_id, requested_by, parameters_json, status,"
                         " object_key, failure_code, failure_message FROM export_task")
        by_id = {str(t["id"]): t for t in tasks}
        # Nothing lost, nothing doubled: one task per submission, each SUCCEEDED.
        self.assertEqual(len(tasks), len(self.submissions))
        self.assertEqual(sorted(by_id), sorted(str(s["id"]) for s in self.submissions))
        per_submission = collections.Counter(
            (t["requested_by"], json.dumps(json.loads(t["parameters_json"]), sort_keys=True))
            for t in tasks)
        self.assertEqual([k for k, n in per_submission.items() if n > 1], [])
        self.assertEqual([t for t in tasks if t["status"] != "SUCCEEDED"], [])
        for phase in ("old fleet", "old and new side by side", "old instances drain",
                      "new fleet", "old instances return", "new instances drain",
                      "old fleet again"):
            self.assertIn(phase, {s["phase"] for s in self.submissions},
                          "no export was created during that step")

        # One file per task, nothing else (the reconciler sweeps leftovers of handed-back
        # attempts within a few rounds).
        keys = sorted(t["object_key"] for t in tasks)
        self.assertEqual(len(set(keys)), len(keys))
        deadline = time.time() + 8
        files = c.stored_files()
        while files != keys and time.time() < deadline:
            time.sleep(0.3)
            files = c.stored_files()
        self.assertEqual(files, keys, "files other than one per SUCCEEDED task")

        # Every file equals the provider's rows for its parameters, cell by cell.
        provider_db = os.path.join(c.dir, "customers.db")
        for t in tasks:
            expected = customer_data.expected_rows(provider_db, t["tenant_id"],
                                                   json.loads(t["parameters_json"]))
            wb = openpyxl.load_workbook(os.path.join(c.storage_root, t["object_key"]),
                                        read_only=True)
            rows = list(wb.worksheets[0].iter_rows(values_only=True))
            wb.close()
            self.assertEqual(list(rows[0]), customer_data.TITLES, t["id"])
            self.assertEqual(len(rows) - 1, len(expected), t["id"])
            for got, want in zip(rows[1:], expected):
                for g, w in zip(got, want):
                    self.assertTrue(customer_data.same_cell(g, w), (t["id"], got, want))

        # Every task's webhook delivered once: one accepted call per task, whichever
        # release wrote the row and whichever sent it.
        deadline = time.time() + 20
        while len(self.receiver.snapshot()) < len(tasks) and time.time() < deadline:
            time.sleep(0.3)
        time.sleep(1.5)  # nothing more may arrive
        calls = self.receiver.snapshot()
        per_task = collections.Counter(json.loads(call["body"])["task"]["taskId"]
                                       for call in calls)
        self.assertEqual(sorted(per_task), sorted(by_id))
        self.assertEqual([k for k, n in per_task.items() if n != 1], [])
        self.assertEqual(len({call["event"] for call in calls}), len(calls))
        self.assertEqual(db.query("SELECT COUNT(*) AS n FROM export_notification"
                                  " WHERE status <> 'DELIVERED'")[0]["n"], 0)

        # Old and new ran each other's tasks (the timeline's CLAIMED events).
        claims = collections.defaultdict(list)
        for e in db.query("SELECT task_id, details_json FROM export_task_event"
                          " WHERE kind = 'CLAIMED' ORDER BY created_at, id"):
            claims[str(e["task_id"])].append(json.loads(e["details_json"])["instance"])
        via = {str(s["id"]): s["via"] for s in self.submissions}

        def is_old(name):
            return name.startswith(self.old_version)

        created_old_run_new = [t for t in by_id if is_old(via[t])
                               and claims[t] and not is_old(claims[t][-1])]
        created_new_run_old = [t for t in by_id if not is_old(via[t])
                               and claims[t] and is_old(claims[t][-1])]
        self.assertTrue(created_old_run_new, "no task created by the old release ran on the new")
        self.assertTrue(created_new_run_old, "no task created by the new release ran on the old")
        # Every long export was running at its instance's drain and was handed back; which
        # instance claims it next is the channel's choice (a queue of a drained RocketMQ
        # consumer waits for the group's rebalance, and by then an instance of the other
        # step may have joined), so the crossing is asserted for one of them, not each:
        # old -> new at the upgrade, new -> old at the rollback.
        for t in list(long_on_old) + list(long_on_new):
            runs = claims[str(t)]
            self.assertGreaterEqual(len(runs), 2, f"long export {t} was not handed back: {runs}")
        self.assertTrue(any(is_old(claims[str(t)][0]) and
                            any(not is_old(r) for r in claims[str(t)][1:]) for t in long_on_old),
                        f"no long export was handed back old -> new:"
                        f" {[claims[str(t)] for t in long_on_old]}")
        self.assertTrue(any(not is_old(claims[str(t)][0]) and
                            any(is_old(r) for r in claims[str(t)][1:]) for t in long_on_new),
                        f"no long export was handed back new -> old:"
                        f" {[claims[str(t)] for t in long_on_new]}")

        # Files the new release wrote download through the old one.
        written_by_new = [t for t in by_id if claims[t] and not is_old(claims[t][-1])][:5]
        self.assertTrue(written_by_new)
        for t in written_by_new:
            token = c.token(str(by_id[t]["requested_by"]), str(by_id[t]["tenant_id"]))
            r = request("GET", serving[0].url + API + f"/export-tasks/{t}/download",
                        token=token, timeout=60)
            self.assertEqual(r.status, 200, r.body[:300])
            with open(os.path.join(c.storage_root, by_id[t]["object_key"]), "rb") as f:
                self.assertEqual(r.body, f.read())
        log(f"created by {self.old_version} and run by the new release:"
            f" {len(created_old_run_new)}; created by the new release and run by"
            f" {self.old_version}: {len(created_new_run_old)}; handed back by a drain:"
            f" {sum(1 for runs in claims.values() if len(runs) > 1)}")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    if len(sys.argv) > 2 and sys.argv[1] == "--db":
        DB = sys.argv[2]
        del sys.argv[1:3]
    assert DB in ("postgres", "mariadb"), DB
    unittest.main(verbosity=2)
