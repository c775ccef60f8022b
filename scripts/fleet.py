#!/usr/bin/env python3
"""A fleet of export-center instances on one machine, runnable by a person.

    scripts/fleet.sh up   [options]   start everything, print the URLs, serve until Ctrl-C
    scripts/fleet.sh soak [options]   start everything, run N exports while instances (and
                                      the broker) are kill -9'ed at random, print the figures,
                                      stop everything; exit 1 when anything was lost,
                                      duplicated or orphaned

What runs (each on a free loopback port, data under one folder):
  - a database: MariaDB (scripts/test-mariadb.sh) or PostgreSQL (scripts/test-postgres.sh)
  - the command channel: a RocketMQ NameServer + broker (scripts/test-rocketmq.sh, topics
    made by `export-center rocketmq init`) or the embedded in-process channel
  - file storage: an S3-compatible server (scripts/test-s3.sh) or a local folder
  - the sample customer service (the business system that supplies the rows)
  - N `export-center serve` instances sharing all of the above

The soak's verdict, from the API and the store only (what an operator sees):
  lost        a submitted export that did not end SUCCEEDED (a task whose every attempt was
              killed may end FAILED/LEASE_LOST: counted apart, it is reported, not lost)
  duplicated  more than one task for one submission, or more than one file for one task
  orphaned    a stored object (or an incomplete upload / partial file) without a SUCCEEDED
              task that names it, after the reconciler's sweep
Every SUCCEEDED task's file is downloaded through the API and opened; its row count must
equal the task's processedRows.
"""
import argparse
import collections
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "pylib"))
from export_center_testkit import ACTIVE, free_port, request, wait_http  # noqa: E402
API = "/api/platform/v1/files"
JWT_SECRET = "fleet-jwt-secret-0123456789-0123456789"
INTERNAL_TOKEN = "fleet-internal-token-0123456789"


def log(msg):
    print(f"fleet: {msg}", file=sys.stderr, flush=True)


def http(method, url, token=None, body=None, timeout=30, headers=None):
    """Returns (status, parsed JSON or raw bytes)."""
    r = request(method, url, token=token, body=body, headers=headers, timeout=timeout)
    return r.status, (r.json() if r.is_json() else r.body)


def wait_up(url, proc=None, timeout=120):
    """Waits for a 2xx/3xx answer (an instance answering 503 is not up yet)."""
    wait_http(url, proc, timeout=timeout, any_status=False, interval=0.2, attempt_timeout=2)


class Fleet:
    """Starts and stops the servers; every one is stopped by its own pid."""

    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.dir = os.path.abspath(args.dir) if args.dir else tempfile.mkdtemp(prefix="ec-fleet-")
        os.makedirs(self.dir, exist_ok=True)
        # The database servers run as their own users and must reach their folders.
        os.chmod(self.dir, 0o755)
        self._stops = []  # run in reverse order by stop()
        self.env = dict(os.environ)
        self.instances = {}  # name -> {"port", "config", "proc"}
        self.provider = None
        self.provider_port = free_port()
        self.namesrv = None

    # ---- infrastructure -------------------------------------------------------------

    def _script(self, name, *args):
        out = subprocess.run([os.path.join(ROOT, "scripts", name), *args], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.strip()
        return out.splitlines()[-1] if out else ""

    def _start_server(self, script, sub):
        folder = os.path.join(self.dir, sub)
        out = self._script(script, "start", folder)
        self._stops.append(lambda: self._script(script, "stop", folder))
        return folder, out

    def start_database(self):
        if self.args.db == "postgres":
            _, url = self._start_server("test-postgres.sh", "postgres")
            return {"kind": "postgres", "postgres-url": url}
        _, url = self._start_server("test-mariadb.sh", "mariadb")
        return {"kind": "mysql", "mysql-url": url}

    def start_storage(self):
        if self.args.storage == "local":
            return {"kind": "local", "root": os.path.join(self.dir, "files")}
        folder, _ = self._start_server("test-s3.sh", "s3")
        values = {}
        with open(os.path.join(folder, "s3.env"), encoding="utf-8") as f:
            for line in f:
                if "=" in line:
                    k, v = line.strip().split("=", 1)
                    values[k] = v
        # Keys travel in the environment, as in production (docs/deploy.md).
        for k in ("EXPORT_CENTER_S3_ACCESS_KEY", "EXPORT_CENTER_S3_SECRET_KEY"):
            self.env[k] = values[k]
        return {"kind": "s3", "s3": {"endpoint": values["EXPORT_CENTER_S3_ENDPOINT"],
                                     "region": values["EXPORT_CENTER_S3_REGION"],
                                     "bucket": values["EXPORT_CENTER_S3_BUCKET"],
                                     "path-style": True}}

    def start_channel(self):
        if self.args.channel == "embedded":
            return {"kind": "embedded"}
        self.broker_dir, self.namesrv = self._start_server("test-rocketmq.sh", "rocketmq")
        return {"kind": "rocketmq",
                "rocketmq": {"namesrv-addr": self.namesrv, "topic-prefix": "fleet-"}}

    def kill_broker(self):
        self._script("test-rocketmq.sh", "kill", self.broker_dir)

    def restart_broker(self):
        self._script("test-rocketmq.sh", "restart", self.broker_dir)

    # ---- config and processes -------------------------------------------------------

    def write_config(self, database, storage, channel):
        self.base_config = {
            "server": {"host": "127.0.0.1", "port": 8080},  # each instance gets its own
            "database": database,
            "storage": storage,
            "channel": channel,
            "auth": {"jwt-hs256-secret": JWT_SECRET,
                     "download-url-secret": "fleet-download-secret-0123456789",
                     "jwt-issuer": "fleet-issuer", "jwt-audience": "export-center"},
            "consumer": {"concurrency": self.args.concurrency, "heartbeat-seconds": 1,
                         "lease-seconds": 10, "max-duration-seconds": 300,
                         "retry-backoff-seconds": [1, 2], "shutdown-grace-seconds": 2,
                         # The whole fleet's slots, so each tenant may use half of them
                         # (docs/dispatch.md#tenant-fairness).
                         "fleet-consumer-slots": self.args.concurrency * self.args.instances},
            "publisher": {"poll-interval-ms": 200, "lease-seconds": 5, "backoff-seconds": [1, 2]},
            "reconciler": {"interval-seconds": 2, "redispatch-grace-seconds": 1,
                           "sent-stale-seconds": 15},
            "limits": {"max-active-per-type": 200},
            "provider-services": {"customer-service": {
                "base-url": f"http://127.0.0.1:{self.provider_port}",
                "internal-token": INTERNAL_TOKEN}},
            "definitions": {"CUSTOMER_LIST": {
                "title": "客户列表", "source": "provider", "provider-service": "customer-service",
                "provider-path": "/internal/exports/v1/CUSTOMER_LIST/batches",
                "required-permission": "platform:customer:export", "app-scope": "PLATFORM",
                "max-rows": 200000, "batch-size": 100,
                "parameters": [{"name": "keyword", "type": "STRING"},
                               {"name": "status", "type": "STRING",
                                "allowed": ["ACTIVE", "INACTIVE", "FROZEN"]}]}},
            "customer-service": {"host": "127.0.0.1", "port": self.provider_port,
                                 "sqlite-path": os.path.join(self.dir, "customers.db"),
                                 "internal-token": INTERNAL_TOKEN,
                                 "snapshot-secret": "fleet-snapshot-secret-0123456789",
                                 "seed-customers": self.args.customers},
        }
        self.config = self._dump("fleet.yaml", self.base_config)

    def _dump(self, name, cfg):
        import yaml  # python3-yaml, installed by scripts/install-deps.sh
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(cfg, f, allow_unicode=True, sort_keys=False)
        return path

    def _spawn(self, args, logname):
        out = open(os.path.join(self.dir, logname), "ab")
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        out.close()
        return proc

    def center(self, *args):
        return subprocess.run([os.path.join(self.build, "export-center"), *args], check=True,
                              stdout=subprocess.PIPE, text=True, env=self.env).stdout

    def start_provider(self):
        self.provider = self._spawn([os.path.join(self.build, "customer-service"), "--config",
                                     self.config], "customer-service.log")
        self._stops.append(lambda: self._stop_proc(self.provider))
        wait_up(f"http://127.0.0.1:{self.provider_port}/healthz", self.provider, timeout=300)

    def start_instance(self, name):
        inst = self.instances.get(name)
        if inst is None:
            port = free_port()
            cfg = json.loads(json.dumps(self.base_config))
            cfg["server"]["port"] = port
            cfg["instance-id"] = name
            inst = {"port": port, "config": self._dump(f"{name}.yaml", cfg), "proc": None}
            self.instances[name] = inst
        inst["proc"] = self._spawn([os.path.join(self.build, "export-center"), "serve",
                                    "--config", inst["config"]], f"{name}.log")
        wait_up(f"http://127.0.0.1:{inst['port']}/healthz", inst["proc"], timeout=120)

    def kill_instance(self, name):
        proc = self.instances[name]["proc"]
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)

    @staticmethod
    def _stop_proc(proc, grace=30):
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)

    def urls(self):
        return [f"http://127.0.0.1:{i['port']}" for i in self.instances.values()]

    def start(self):
        log(f"folder {self.dir}")
        database = self.start_database()
        storage = self.start_storage()
        channel = self.start_channel()
        self.write_config(database, storage, channel)
        self.center("migrate", "--config", self.config)
        if self.args.channel == "rocketmq":
            self.center("rocketmq", "init", "--config", self.config)
        self.start_provider()
        if self.args.provider_latency_ms:
            # A slow business service, so that kills hit exports in flight.
            http("POST", f"http://127.0.0.1:{self.provider_port}/admin/faults",
                 body={"hangMs": self.args.provider_latency_ms, "hangCount": 100000000},
                 headers={"X-Internal-Service-Token": INTERNAL_TOKEN})
        for n in range(self.args.instances):
            self.start_instance(f"center-{n + 1}")
        self._stops.append(lambda: [self._stop_proc(i["proc"]) for i in self.instances.values()])

    def stop(self):
        while self._stops:
            try:
                self._stops.pop()()
            except Exception as e:  # noqa: BLE001 - keep stopping the rest
                log(f"stop: {e!r}")
        if not self.args.keep and not self.args.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def token(self, user, tenant):
        return self.center("token", "--config", self.config, "--user", user, "--tenant", tenant,
                           "--app", "PLATFORM", "--ttl", "86400", "--perm",
                           "platform:customer:export").strip()

    def stored_objects(self):
        """(key, is_partial) for every object, incomplete upload and partial file."""
        # `storage list` prints "KEY SIZE complete" or "NAME SIZE|- partial" per line.
        out = self.center("storage", "list", "--config", self.config)
        objects = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3:
                objects.append((parts[0], parts[2] != "complete"))
        return objects


# ---- the soak ---------------------------------------------------------------------------


class Soak:
    CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "南京", "苏州", "西安"]
    WORDS = ["华", "盛", "鑫", "泰", "恒", "瑞", "安", "达", "信", "联", "通", "创", "远", "嘉"]

    def __init__(self, fleet, args):
        self.fleet = fleet
        self.args = args
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.errors = []
        self.kills = []

    def parameters(self, k):
        """Distinct small parameters for export k."""
        if k < self.args.customers // 10:
            return {"keyword": f"CUS{k:07d}"}  # codes CUS{k:07d}0..9: about ten customers
        j = k - self.args.customers // 10
        combos = len(self.CITIES) * len(self.WORDS)
        params = {"keyword": self.CITIES[j % len(self.CITIES)]
                  + self.WORDS[(j // len(self.CITIES)) % len(self.WORDS)]}
        status = ["", "ACTIVE", "INACTIVE", "FROZEN"][(j // combos) % 4]
        if status:
            params["status"] = status
        return params

    def count(self, name):
        with self.lock:
            self.counts[name] += 1

    def submit(self, user, token, plan):
        rng = random.Random(user)
        time.sleep(rng.uniform(0, 5))
        for params in plan:
            deadline = time.time() + 300
            while time.time() < deadline:
                base = rng.choice(self.fleet.urls())
                try:
                    status, reply = http("POST", base + API + "/export-tasks", token,
                                         {"exportType": "CUSTOMER_LIST", "parameters": params})
                except OSError:
                    self.count("connection_retries")  # that instance is being killed
                    time.sleep(0.3)
                    continue
                code = reply.get("code") if isinstance(reply, dict) else None
                if code == "200":
                    self.count("submitted")
                    break
                if code == "429":
                    self.count("retries_429")
                    time.sleep(rng.uniform(0.2, 0.8))
                    continue
                self.errors.append(f"{user}: unexpected reply {status} {reply!r}")
                return
            else:
                self.errors.append(f"{user}: could not submit {params}")
                return
            time.sleep(rng.uniform(0, 1.5))

    def killer(self, running):
        rng = random.Random(7)
        names = list(self.fleet.instances)
        broker_kills_left = self.args.broker_kills if self.args.channel == "rocketmq" else 0
        while running.is_set() and len(self.kills) < self.args.kills + self.args.broker_kills:
            end = time.time() + rng.uniform(1.5, 4)
            while time.time() < end and running.is_set():
                time.sleep(0.1)
            if not running.is_set():
                return
            try:
                instance_kills = sum(1 for k in self.kills if k != "broker")
                if broker_kills_left and (rng.random() < 0.3 or instance_kills >= self.args.kills):
                    broker_kills_left -= 1
                    self.fleet.kill_broker()
                    self.kills.append("broker")
                    time.sleep(rng.uniform(1, 4))
                    self.fleet.restart_broker()
                else:
                    name = rng.choice(names)
                    self.fleet.kill_instance(name)
                    self.kills.append(name)
                    self.fleet.start_instance(name)
            except Exception as e:  # noqa: BLE001 - reported by the main thread
                self.errors.append(f"killer: {e!r}")
                return

    def run(self):
        users = [(f"fleet-u{n:02d}", "1" if n % 2 == 0 else "2") for n in range(self.args.users)]
        tokens = {u: self.fleet.token(u, t) for u, t in users}
        per_user = -(-self.args.exports // len(users))
        plans, k = {}, 0
        for u, _ in users:
            plans[u] = []
            for _ in range(per_user):
                if k < self.args.exports:
                    plans[u].append(self.parameters(k))
                    k += 1
        running = threading.Event()
        running.set()
        started = time.time()
        threads = [threading.Thread(target=self.submit, args=(u, tokens[u], plans[u]),
                                    daemon=True) for u, _ in users]
        killer = threading.Thread(target=self.killer, args=(running,), daemon=True)
        for t in threads:
            t.start()
        killer.start()
        for t in threads:
            t.join(timeout=900)
        # Every planned kill happens (the last ones may find the fleet idle: a restart
        # must not lose or duplicate anything either), then everything settles.
        deadline = time.time() + 600
        planned = self.args.kills + self.args.broker_kills
        tasks = []
        while time.time() < deadline:
            if len(self.kills) >= planned or not killer.is_alive():
                running.clear()
            tasks = self.all_tasks(tokens)
            active = [t for t in tasks if t["status"] in ACTIVE]
            if not active and not running.is_set():
                break
            time.sleep(1)
        running.clear()
        killer.join(timeout=120)
        finished = time.time()
        return self.verdict(plans, tokens, tasks, finished - started)

    def all_tasks(self, tokens):
        tasks = []
        base = self.fleet.urls()[0]
        for user, token in tokens.items():
            page = 1
            while True:
                for attempt in range(20):
                    try:
                        status, reply = http("GET", f"{base}{API}/export-tasks?page={page}"
                                             "&size=100", token)
                        break
                    except OSError:
                        time.sleep(0.5)  # this instance was just killed
                        base = random.choice(self.fleet.urls())
                records = reply["data"]["records"]
                tasks.extend(dict(r, user=user) for r in records)
                if len(records) < 100:
                    break
                page += 1
        return tasks

    def rows_in_file(self, base, token, task_id):
        import openpyxl  # python3-openpyxl, installed by scripts/install-deps.sh
        status, body = http("GET", f"{base}{API}/export-tasks/{task_id}/download", token,
                            timeout=120)
        if status != 200 or not isinstance(body, bytes):
            raise RuntimeError(f"task {task_id}: download answered {status}")
        wb = openpyxl.load_workbook(io.BytesIO(body), read_only=True)
        rows = sum(1 for _ in wb.worksheets[0].iter_rows(values_only=True)) - 1
        wb.close()
        return rows

    def verdict(self, plans, tokens, tasks, seconds):
        submitted = {(u, json.dumps(p, sort_keys=True)) for u, ps in plans.items() for p in ps}
        by_submission = collections.defaultdict(list)
        for t in tasks:
            by_submission[(t["user"], json.dumps(t["parameters"], sort_keys=True))].append(t)
        lease_lost = [t for t in tasks if t["status"] == "FAILED"
                      and t.get("failureCode") == "LEASE_LOST"]
        lost = [s for s in submitted
                if not any(t["status"] == "SUCCEEDED" for t in by_submission.get(s, []))
                and not any(t in lease_lost for t in by_submission.get(s, []))]
        duplicated = [s for s, ts in by_submission.items() if len(ts) > 1]
        # Files: the reconciler sweeps leftovers of killed attempts within a few rounds.
        succeeded = [t for t in tasks if t["status"] == "SUCCEEDED"]
        ids = {t["id"] for t in succeeded}
        deadline = time.time() + 120
        while True:
            objects = self.fleet.stored_objects()
            per_task = collections.Counter(o.split("/")[4] for o, partial in objects
                                           if not partial and o.count("/") >= 4)
            orphans = [o for o, partial in objects
                       if partial or o.count("/") < 4 or o.split("/")[4] not in ids]
            if not orphans or time.time() > deadline:
                break
            time.sleep(2)
        duplicated += [f"task {i}: {n} files" for i, n in per_task.items() if n > 1]
        missing = [i for i in ids if per_task.get(i, 0) == 0]
        base = self.fleet.urls()[0]
        bad_files = []
        rows = 0
        for t in succeeded:
            token = tokens[t["user"]]
            try:
                n = self.rows_in_file(base, token, t["id"])
            except Exception as e:  # noqa: BLE001 - counted as a bad file
                bad_files.append(f"task {t['id']}: {e}")
                continue
            rows += n
            if n != int(t["processedRows"]):
                bad_files.append(f"task {t['id']}: {n} rows in the file,"
                                 f" {t['processedRows']} processed")
        by_status = collections.Counter(t["status"] for t in tasks)
        retries = sum(max(0, int(t["attemptCount"]) - 1) for t in tasks)
        print(f"fleet soak: {self.args.instances} instances, db {self.args.db}, storage"
              f" {self.args.storage}, channel {self.args.channel}; exports"
              f" {len(submitted)} submitted by {len(plans)} users, tasks {len(tasks)}"
              f" ({dict(by_status)}), kills {len(self.kills)}"
              f" ({collections.Counter(k if k == 'broker' else 'instance' for k in self.kills)}),"
              f" {seconds:.0f} s, {len(tasks) / seconds * 60:.0f} exports/min, rows {rows},"
              f" attempts recovered {retries};"
              f" lost {len(lost)}, duplicated {len(duplicated)}, orphaned {len(orphans)},"
              f" failed after every attempt was killed {len(lease_lost)}, missing files"
              f" {len(missing)}, bad files {len(bad_files)}, 429 retries"
              f" {self.counts['retries_429']}, connection retries"
              f" {self.counts['connection_retries']}")
        problems = self.errors + [f"lost {s}" for s in lost] + [f"duplicated {d}" for d in
                                                                 duplicated]
        problems += [f"orphan {o}" for o in orphans] + [f"missing file of task {i}" for i in
                                                         missing] + bad_files
        if len(self.kills) < self.args.kills + self.args.broker_kills:
            problems.append(f"only {len(self.kills)} kills happened")
        if self.kills and retries == 0:
            problems.append("no kill hit a running export: nothing was recovered")
        for p in problems[:30]:
            log(p)
        return 0 if not problems else 1


def parse_args(argv):
    p = argparse.ArgumentParser(prog="fleet.sh", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["up", "soak"])
    p.add_argument("--db", choices=["mariadb", "postgres"], default="mariadb")
    p.add_argument("--storage", choices=["s3", "local"], default="s3")
    p.add_argument("--channel", choices=["rocketmq", "embedded"], default="rocketmq")
    p.add_argument("--instances", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=4, help="consumer threads per instance")
    p.add_argument("--customers", type=int, default=3000)
    p.add_argument("--exports", type=int, default=500)
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--kills", type=int, default=6, help="kill -9's of instances")
    p.add_argument("--broker-kills", type=int, default=2, help="kill -9's of the broker")
    p.add_argument("--provider-latency-ms", type=int, default=300,
                   help="the customer service's delay per batch, so that kills hit running"
                   " exports (0: none)")
    p.add_argument("--dir", help="keep everything in this folder (default: a temp folder)")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--keep", action="store_true", help="keep the temp folder")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.channel == "embedded":
        args.broker_kills = 0
    fleet = Fleet(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        fleet.start()
        if args.command == "up":
            print("export-center fleet is up:")
            for url in fleet.urls():
                print(f"  {url}/  (API {url}{API})")
            print(f"  customer service http://127.0.0.1:{fleet.provider_port}")
            if fleet.namesrv:
                print(f"  RocketMQ NameServer {fleet.namesrv}")
            print(f"  config {fleet.config}; a token: build/export-center token --config"
                  f" {fleet.config} --user u1 --tenant 1 --app PLATFORM"
                  " --perm platform:customer:export")
            print("Ctrl-C stops everything.", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        return Soak(fleet, args).run()
    finally:
        fleet.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
