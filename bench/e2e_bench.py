#!/usr/bin/env python3
"""e2e_bench: the export a user waits for, measured end to end.

Starts the real processes — `export-center serve` and the sample
customer-service seeded with N customers and N orders — and runs one export
per route through the HTTP API, timing it from the create call to SUCCEEDED:

  provider        CUSTOMER_LIST, the provider route (cursor batches over HTTP)
  sql-callback    ORDER_LIST, the sql-template route, customer_name enriched
                  by the business service's /dispatch/enrich callback
  sql-enrich-sql  ORDER_LIST_SQL, the same with an enrich SQL on the replica

The sql-template routes run once per datasource kind: sqlite (the service's
own file), postgres (scripts/test-postgres.sh) and mariadb (a throwaway
mariadbd; scripts/test-mariadb.sh when the repository has it). Each replica
holds a copy of the service's `orders` and `customer` tables; the service
serves a template written for that replica's dialect.

Every export of those three is tenant 2's rows without filters: 40 % of N
(N=1M gives 400 000 rows; one export may hold at most 500 000, registry
max-rows). Two more routes export tenant 1's orders filtered by status=PAID
(20 % of N: 200 000 rows at N=1M), a filter the page's index (tenant_id,
order_date, id) does not cover, so the replica filters the rows it walks:

  sql-callback-status    ORDER_LIST with status=PAID, callback enrichment
  sql-enrich-sql-status  ORDER_LIST_SQL with status=PAID, enrich SQL

each run twice per datasource: first with the replicas as loaded, without
statistics ("no stats": SQLite without sqlite_stat1, PostgreSQL with
autovacuum off and never analysed, MariaDB before ANALYZE TABLE — InnoDB
still samples its own index statistics), then after ANALYZE ("stats"), the
state the other routes run in.

Printed per route: rows, seconds, rows/s, CPU seconds of the center, the
business service and the database server, the center's peak private RSS
(RssAnon) sampled during the export, and the ratio to the writer's render-only rows/s
(bench/xlsx_bench --only ours, 0.4 N rows, same run; the fastest of as many
runs as each route gets, at least 3).

usage: bench/e2e_bench.py [--build-dir build] [--rows 200000,1000000]
           [--datasources sqlite,postgres,mariadb] [--routes provider,sql-callback,sql-enrich-sql]
           [--format XLSX|CSV] [--concurrent K] [--repeat R] [--compare OTHER_BUILD_DIR] [--keep]
           [--covering-lookup-index] [--statistics both|with|without]

--compare runs every route on OTHER_BUILD_DIR's export-center too (stopping
one center and starting the other on the same replicas and services),
alternating run by run, and prints "(before)" and "(after)" rows: on a shared
machine two separate runs minutes apart see different loads.

Seeded databases are cached in ${EXPORT_CENTER_BENCH_DIR:-/tmp/ec-bench}
(about 250 MB per million rows). Not a test: it prints figures.
"""
import argparse
import csv
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "pylib"))
from export_center_testkit import ENDED, free_port, request, wait_http  # noqa: E402

API = "/api/platform/v1/files"
TOKEN = "bench-internal-token-0123456789"
TENANT = "2"
STATUS_TENANT = "1"
STATUS_FILTER = {"status": "PAID"}
PERMS = ("platform:customer:export", "platform:order:export")
ROUTES = ("provider", "sql-callback", "sql-enrich-sql", "sql-callback-status",
          "sql-enrich-sql-status")
# route -> (query id, tenant, parameters)
SQL_ROUTES = {"sql-callback": ("ORDER_LIST", TENANT, {}),
              "sql-enrich-sql": ("ORDER_LIST_SQL", TENANT, {}),
              "sql-callback-status": ("ORDER_LIST", STATUS_TENANT, STATUS_FILTER),
              "sql-enrich-sql-status": ("ORDER_LIST_SQL", STATUS_TENANT, STATUS_FILTER)}
STATUS_ROUTES = ("sql-callback-status", "sql-enrich-sql-status")
DATASOURCES = ("sqlite", "postgres", "mariadb")
DIALECT = {"sqlite": "sqlite", "postgres": "postgres", "mariadb": "mysql"}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def http(method, url, token=None, body=None, timeout=60):
    """(status, raw body bytes)."""
    r = request(method, url, token=token, body=body, timeout=timeout)
    return r.status, r.body


# ---- /proc figures -------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return text[text.rindex(")") + 2:].split()  # fields from 3 (state) on


def cpu_seconds(pid, children=False):
    """utime+stime of a process; with children, plus its reaped children
    (cutime+cstime) and its live children (PostgreSQL forks a backend per
    connection)."""
    try:
        f = _stat_fields(pid)
    except OSError:
        return 0.0
    ticks = int(f[11]) + int(f[12])
    if children:
        ticks += int(f[13]) + int(f[14])
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                c = _stat_fields(int(entry))
            except OSError:
                continue
            if int(c[1]) == pid:
                ticks += int(c[11]) + int(c[12])
    return ticks / TICK


def rss_kb(pid):
    """Private resident memory (RssAnon): the heap and stacks. File pages the
    SQLite datasource maps are the OS page cache, shared and reclaimable, and
    would make VmRSS grow with the database file instead of the export."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler:
    """The highest RssAnon of a process while it runs, sampled every 20 ms."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = rss_kb(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_kb(self.pid))

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


# ---- data ----------------------------------------------------------------------

ORDER_COLUMNS = ("id", "tenant_id", "order_no", "customer_id", "customer_code", "status",
                 "channel", "amount_cents", "quantity", "paid", "order_date", "created_at")
CUSTOMER_COLUMNS = ("id", "tenant_id", "customer_code", "name", "status", "balance_cents",
                    "credit_limit", "vip", "registered_on", "last_order_at", "remarks")


def service_config(path, port, sqlite_path, rows, dialect):
    section = {"host": "127.0.0.1", "port": port, "sqlite-path": sqlite_path,
               "internal-token": TOKEN, "snapshot-secret": "bench-snapshot-secret-0123456789abcdef",
               "seed-customers": rows, "seed-orders": rows, "replica-dialect": dialect}
    with open(path, "w") as f:
        yaml.safe_dump({"customer-service": section}, f)


def seeded_database(build_dir, cache, rows):
    """The service's SQLite file with N customers and N orders, seeded once."""
    # v2: orders_tenant_date in the list's order (order_date DESC, id).
    path = os.path.join(cache, f"customers-{rows}-v2.db")
    if os.path.exists(path):
        return path
    os.makedirs(cache, exist_ok=True)
    tmp = path + ".seeding"
    for stale in (tmp, tmp + "-wal", tmp + "-shm"):
        if os.path.exists(stale):
            os.remove(stale)
    config = os.path.join(cache, f"seed-{rows}.yaml")
    service_config(config, free_port(), tmp, rows, "sqlite")
    log(f"seeding {rows} customers and {rows} orders (once, cached in {cache}) ...")
    proc = subprocess.Popen([os.path.join(build_dir, "customer-service"), "--config", config])
    try:
        wait_http(f"http://127.0.0.1:{yaml.safe_load(open(config))['customer-service']['port']}"
                  "/healthz", proc, timeout=1800)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the service ran ANALYZE after seeding
    con.close()
    os.replace(tmp, path)
    return path


def dump_table(sqlite_path, table, columns, out_path, mysql_style):
    """The table as CSV (PostgreSQL COPY: empty unquoted = NULL) or as
    tab-separated text with \\N for NULL (MariaDB LOAD DATA)."""
    con = sqlite3.connect(sqlite_path)
    try:
        cur = con.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id")
        with open(out_path, "w", newline="", encoding="utf-8") as f:
            if mysql_style:
                for row in cur:
                    f.write("\t".join(
                        "\\N" if v is None else str(v).replace("\\", "\\\\").replace(
                            "\t", "\\t").replace("\n", "\\n") for v in row))
                    f.write("\n")
            else:
                w = csv.writer(f, lineterminator="\n")
                for row in cur:
                    w.writerow(["" if v is None else v for v in row])
    finally:
        con.close()


def schema_sql(dialect, covering_lookup=False):
    text = "TEXT" if dialect == "postgres" else "VARCHAR(64)"
    long_text = "TEXT"
    # No statistics until the bench asks for them (Replica.analyze): autovacuum
    # would analyse the freshly loaded tables within a minute.
    options = " WITH (autovacuum_enabled = false)" if dialect == "postgres" else ""
    return [
        f"CREATE TABLE orders (id BIGINT PRIMARY KEY, tenant_id {text} NOT NULL,"
        f" order_no {text} NOT NULL, customer_id BIGINT NOT NULL, customer_code {text} NOT NULL,"
        f" status {text} NOT NULL, channel {text} NOT NULL, amount_cents BIGINT NOT NULL,"
        " quantity INTEGER NOT NULL, paid INTEGER NOT NULL, order_date DATE NOT NULL,"
        " created_at BIGINT NOT NULL)" + options,
        f"CREATE TABLE customer (id BIGINT PRIMARY KEY, tenant_id {text} NOT NULL,"
        f" customer_code {text} NOT NULL, name {text} NOT NULL, status {text} NOT NULL,"
        " balance_cents BIGINT NOT NULL, credit_limit BIGINT NOT NULL, vip INTEGER NOT NULL,"
        f" registered_on DATE NOT NULL, last_order_at BIGINT NULL, remarks {long_text} NULL)"
        + options,
        # In the list's own order (order_date DESC, id), as the service's
        # SQLite has it: on an ascending index SQLite and PostgreSQL sort the
        # id ties of every page's dates, MariaDB the whole page.
        "CREATE INDEX orders_tenant_date ON orders (tenant_id, order_date DESC, id)",
        "CREATE INDEX customer_code ON customer (customer_code)",
    ] + ([COVERING_LOOKUP_INDEX] if covering_lookup else [])


# --covering-lookup-index: what docs/sql-template-route.md advises for an enrich
# SQL's lookup (WHERE tenant_id = ? AND customer_code IN (...), selecting name):
# an index holding every column it reads, so the replica answers from the index
# alone instead of descending the table's own B-tree once more per key.
COVERING_LOOKUP_INDEX = "CREATE INDEX customer_lookup ON customer (tenant_id, customer_code, name)"


class Postgres:
    kind = "postgres"

    def __init__(self, work, sqlite_path, covering_lookup):
        self.dir = os.path.join(work, "pg")
        script = os.path.join(ROOT, "scripts", "test-postgres.sh")
        # Replicas sized for their data, as MariaDB's buffer pool below.
        env = {**os.environ, "EXPORT_CENTER_PG_SERVER_OPTIONS": "-c shared_buffers=512MB"}
        self.url = subprocess.check_output([script, "start", self.dir, "bench"], text=True,
                                           env=env).strip().splitlines()[-1]
        with open(os.path.join(self.dir, "postgres.pid")) as f:
            self.pid = int(f.read().strip())
        log(f"postgres at {self.url}; loading ...")
        for stmt in schema_sql("postgres", covering_lookup):
            self.psql(stmt)
        for table, columns in (("orders", ORDER_COLUMNS), ("customer", CUSTOMER_COLUMNS)):
            path = os.path.join(work, f"{table}.csv")
            dump_table(sqlite_path, table, columns, path, mysql_style=False)
            self.psql(f"\\copy {table} ({', '.join(columns)}) FROM '{path}' WITH (FORMAT csv)")
            os.remove(path)
        self.psql("VACUUM")  # hint bits and the visibility map; statistics come in analyze()

    def analyze(self):
        self.psql("ANALYZE")

    def psql(self, sql):
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url, "-c", sql],
                       check=True)

    def cpu(self):
        return cpu_seconds(self.pid, children=True)

    def stop(self):
        subprocess.run([os.path.join(ROOT, "scripts", "test-postgres.sh"), "stop", self.dir],
                       check=False)


class MariaDb:
    """scripts/test-mariadb.sh start DIR DB when the repository has it; else a
    throwaway mariadbd started here the way tests/support/mariadb_server.cc
    does, as the mysql user."""

    kind = "mariadb"

    def __init__(self, work, sqlite_path, covering_lookup):
        self.dir = os.path.join(work, "maria")
        os.makedirs(self.dir)
        self.script = os.path.join(ROOT, "scripts", "test-mariadb.sh")
        self.proc = None
        if os.path.exists(self.script):
            # Sized for its data like PostgreSQL's shared_buffers above and the
            # server _start_here starts (the script's own default is 64M).
            env = {**os.environ,
                   "EXPORT_CENTER_MARIADB_SERVER_OPTIONS": "--innodb-buffer-pool-size=512M"}
            self.url = subprocess.check_output([self.script, "start", self.dir, "bench"],
                                               text=True, env=env).strip().splitlines()[-1]
            self.port = int(re.search(r":(\d+)/", self.url).group(1))
            with open(os.path.join(self.dir, "mariadb.pid")) as f:
                self.pid = int(f.read().strip())
        else:
            self._start_here()
        log(f"mariadb at {self.url}; loading ...")
        for stmt in schema_sql("mysql", covering_lookup):
            self.sql(stmt)
        for table, columns in (("orders", ORDER_COLUMNS), ("customer", CUSTOMER_COLUMNS)):
            path = os.path.join(work, f"{table}.tsv")
            dump_table(sqlite_path, table, columns, path, mysql_style=True)
            self.sql(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table}"
                     f" CHARACTER SET utf8mb4 ({', '.join(columns)})", local_infile=True)
            os.remove(path)

    def analyze(self):
        self.sql("ANALYZE TABLE orders, customer")

    def _start_here(self):
        data = os.path.join(self.dir, "data")
        user = ["--user=mysql"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "mysql", "mysql")
        common = ["--no-defaults", f"--datadir={data}"] + user
        with open(os.path.join(self.dir, "mariadb.log"), "ab") as out:
            subprocess.run(["/usr/bin/mariadb-install-db", *common,
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           check=True, stdout=out, stderr=subprocess.STDOUT)
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["/usr/sbin/mariadbd", *common, f"--socket={self.dir}/mariadb.sock",
             f"--port={self.port}", "--bind-address=127.0.0.1",
             f"--pid-file={self.dir}/mariadb.pid", f"--log-error={self.dir}/mariadb.log",
             "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin",
             "--innodb-buffer-pool-size=512M", "--local-infile=1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid
        deadline = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited; see {self.dir}/mariadb.log")
            ok = subprocess.run(["mariadb", "-h127.0.0.1", f"-P{self.port}", "-uroot", "-e",
                                 "SELECT 1"], capture_output=True).returncode == 0
            if ok:
                break
            if time.time() > deadline:
                raise RuntimeError("mariadbd did not answer in 120 s")
            time.sleep(0.2)
        subprocess.run(["mariadb", "-h127.0.0.1", f"-P{self.port}", "-uroot", "-e",
                        "CREATE DATABASE bench CHARACTER SET utf8mb4"], check=True)
        self.url = f"mysql://root@127.0.0.1:{self.port}/bench"

    def sql(self, stmt, local_infile=False):
        args = ["mariadb", "-h127.0.0.1", f"-P{self.port}", "-uroot", "bench"]
        if local_infile:
            args.append("--local-infile=1")
        subprocess.run(args + ["-e", stmt], check=True)

    def cpu(self):
        return cpu_seconds(self.pid)

    def stop(self):
        if self.proc is None:
            subprocess.run([self.script, "stop", self.dir], check=False)
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class SqliteReplica:
    kind = "sqlite"

    def __init__(self, sqlite_path):
        self.url = None
        self.path = sqlite_path
        # The service analysed its file after seeding; start without statistics
        # like the other replicas. Dropping the table changes the schema, so open
        # connections reload it and forget the statistics too.
        con = sqlite3.connect(sqlite_path)
        for table in ("sqlite_stat1", "sqlite_stat4"):
            con.execute(f"DROP TABLE IF EXISTS {table}")
        con.commit()
        con.close()

    def analyze(self):
        con = sqlite3.connect(self.path)
        con.execute("ANALYZE")
        con.close()

    def cpu(self):
        return 0.0  # in the center's own process

    def stop(self):
        pass


# ---- the processes ---------------------------------------------------------------

ORDER_PARAMETERS = [
    {"name": "status", "type": "STRING", "allowed": ["NEW", "PAID", "SHIPPED", "DONE", "REFUNDED"]},
    {"name": "channel", "type": "STRING", "allowed": ["WEB", "APP", "STORE"]},
    {"name": "dateFrom", "type": "DATE"},
    {"name": "dateTo", "type": "DATE"},
    {"name": "keyword", "type": "STRING"},
    {"name": "customerCodes", "type": "STRING_LIST"},
]


def center_config(work, port, services, replicas, batch_size):
    definitions = {
        "CUSTOMER_LIST": {
            "title": "客户列表", "source": "provider", "provider-service": "svc-sqlite",
            "provider-path": "/internal/exports/v1/CUSTOMER_LIST/batches",
            "required-permission": "platform:customer:export", "app-scope": "PLATFORM",
            "max-rows": 500000, "max-attempts": 1, "batch-size": batch_size,
            "timezone": "Asia/Shanghai",
            "parameters": [{"name": "keyword", "type": "STRING"},
                           {"name": "status", "type": "STRING",
                            "allowed": ["ACTIVE", "INACTIVE", "FROZEN"]}]},
    }
    datasources = {}
    for kind, replica in replicas.items():
        if kind == "sqlite":
            datasources["replica-sqlite"] = {"kind": "sqlite", "sqlite-path": replica.path}
        else:
            datasources[f"replica-{kind}"] = {
                "kind": "postgres" if kind == "postgres" else "mysql", "url": replica.url}
        for query_id, consistency in (("ORDER_LIST", "strict"), ("ORDER_LIST_SQL", "lenient")):
            definitions[f"{query_id}_{kind.upper()}"] = {
                "title": query_id, "source": "sql-template", "provider-service": f"svc-{kind}",
                "query-id": query_id, "datasource": f"replica-{kind}", "consistency": consistency,
                "required-permission": "platform:order:export", "app-scope": "PLATFORM",
                "max-rows": 500000, "max-attempts": 1, "batch-size": batch_size,
                "timezone": "Asia/Shanghai", "parameters": ORDER_PARAMETERS}
    return {
        "server": {"host": "127.0.0.1", "port": port},
        "database": {"kind": "sqlite", "sqlite-path": os.path.join(work, "center.db")},
        "storage": {"kind": "local", "root": os.path.join(work, "files")},
        "auth": {"jwt-hs256-secret": "bench-jwt-secret-0123456789-0123456789",
                 "download-url-secret": "bench-download-secret-0123456789",
                 "jwt-issuer": "bench-issuer", "jwt-audience": "export-center"},
        "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 100,
                   "max-active-per-type": 100},
        "consumer": {"concurrency": 4, "lease-seconds": 60, "heartbeat-seconds": 10},
        "publisher": {"poll-interval-ms": 100},
        "provider-services": {f"svc-{kind}": {"base-url": f"http://127.0.0.1:{p}",
                                              "internal-token": TOKEN}
                              for kind, (_, p) in services.items()},
        "datasources": datasources,
        "definitions": definitions,
    }


class Bench:
    def __init__(self, args, rows):
        self.args = args
        self.rows = rows
        self.build = os.path.abspath(args.build_dir)
        self.work = tempfile.mkdtemp(prefix="ec-e2e-bench-", dir="/tmp")
        os.chmod(self.work, 0o755)  # the database servers' users must traverse it
        self.replicas = {}
        self.services = {}  # kind -> (Popen, port)
        self.center = None

    def start(self):
        cached = seeded_database(self.build, self.args.cache_dir, self.rows)
        self.sqlite_path = os.path.join(self.work, "customers.db")
        shutil.copyfile(cached, self.sqlite_path)
        if self.args.covering_lookup_index:
            con = sqlite3.connect(self.sqlite_path)
            con.execute(COVERING_LOOKUP_INDEX)
            con.close()
        for kind in self.args.datasources:
            try:
                if kind == "sqlite":
                    self.replicas[kind] = SqliteReplica(self.sqlite_path)
                elif kind == "postgres":
                    self.replicas[kind] = Postgres(self.work, self.sqlite_path,
                                                   self.args.covering_lookup_index)
                else:
                    self.replicas[kind] = MariaDb(self.work, self.sqlite_path,
                                                  self.args.covering_lookup_index)
            except (OSError, subprocess.CalledProcessError, RuntimeError) as e:
                log(f"NOTE: datasource {kind} skipped: {e}")
        kinds = set(self.replicas) | {"sqlite"}  # CUSTOMER_LIST is served by svc-sqlite
        for kind in sorted(kinds):
            port = free_port()
            config = os.path.join(self.work, f"service-{kind}.yaml")
            service_config(config, port, self.sqlite_path, self.rows, DIALECT[kind])
            out = open(os.path.join(self.work, f"service-{kind}.log"), "ab")
            proc = subprocess.Popen([os.path.join(self.build, "customer-service"), "--config",
                                     config], stdout=out, stderr=subprocess.STDOUT)
            self.services[kind] = (proc, port)
            wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=600)
        self.port = free_port()
        self.config = os.path.join(self.work, "center.yaml")
        with open(self.config, "w") as f:
            yaml.safe_dump(center_config(self.work, self.port, self.services, self.replicas,
                                         self.args.batch_size), f, allow_unicode=True)
        self.start_center(self.build)

    def start_center(self, build):
        """`serve` from `build` (after stopping the one running): --compare runs
        two builds' centers, one after the other, on the same replicas."""
        self.stop_center()
        out = open(os.path.join(self.work, "center.log"), "ab")
        self.center = subprocess.Popen([os.path.join(build, "export-center"), "serve",
                                        "--config", self.config], stdout=out,
                                       stderr=subprocess.STDOUT)
        self.center_build = build
        wait_http(f"http://127.0.0.1:{self.port}/healthz", self.center, timeout=60)
        self.tokens = {tenant: subprocess.check_output(
            [os.path.join(build, "export-center"), "token", "--config", self.config,
             "--user", "bench", "--tenant", tenant, "--app", "PLATFORM", "--ttl", "86400",
             *sum((["--perm", p] for p in PERMS), [])], text=True).strip()
            for tenant in (TENANT, STATUS_TENANT)}

    def stop_center(self):
        if self.center and self.center.poll() is None:
            self.center.send_signal(signal.SIGTERM)
            self.center.wait(timeout=120)

    def stop(self):
        self.stop_center()
        for proc, _ in self.services.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=60)
        for replica in self.replicas.values():
            replica.stop()
        if self.args.keep:
            log(f"kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    def create(self, export_type, tenant, parameters):
        status, body = http("POST", f"http://127.0.0.1:{self.port}{API}/export-tasks",
                            self.tokens[tenant], {"exportType": export_type,
                                                  "parameters": parameters,
                                                  "format": self.args.format})
        answer = json.loads(body)
        if status != 200 or answer.get("code") != "200":
            raise RuntimeError(f"create {export_type}: HTTP {status} {answer}")
        return answer["data"]["id"]

    def wait(self, task_id, tenant):
        while True:
            _, body = http("GET", f"http://127.0.0.1:{self.port}{API}/export-tasks/{task_id}",
                           self.tokens[tenant])
            data = json.loads(body).get("data") or {}
            if data.get("status") in ENDED:
                return data
            time.sleep(0.02)

    def run(self, name, export, service_kind, replica):
        """The fastest of --repeat runs of one route: the machine is shared, and
        the fastest run is the one least disturbed. With --compare, each
        repeat runs the route on the --compare build's center and then on this
        build's, so both see the same load; one result per build."""
        if not self.args.compare:
            runs = [self.run_once(name, export, service_kind, replica)
                    for _ in range(self.args.repeat)]
            return [min(runs, key=lambda r: r["seconds"])]
        builds = (("before", os.path.abspath(self.args.compare)), ("after", self.build))
        runs = {label: [] for label, _ in builds}
        for _ in range(self.args.repeat):
            for label, build in builds:
                if self.center_build != build:
                    self.start_center(build)
                runs[label].append(self.run_once(f"{name} ({label})", export,
                                                 service_kind, replica))
        return [min(runs[label], key=lambda r: r["seconds"]) for label, _ in builds]

    def run_once(self, name, export, service_kind, replica):
        """One route (or --concurrent copies of it at once); export is
        (export type, tenant, parameters)."""
        export_type, tenant, parameters = export
        service_pid = self.services[service_kind][0].pid
        before = (cpu_seconds(self.center.pid), cpu_seconds(service_pid),
                  replica.cpu() if replica else 0.0)
        sampler = RssSampler(self.center.pid)
        start = time.time()
        ids = [self.create(export_type, tenant, parameters) for _ in range(self.args.concurrent)]
        tasks = [self.wait(i, tenant) for i in ids]
        seconds = time.time() - start
        peak = sampler.stop()
        after = (cpu_seconds(self.center.pid), cpu_seconds(service_pid),
                 replica.cpu() if replica else 0.0)
        failed = [t for t in tasks if t["status"] != "SUCCEEDED"]
        rows = sum(int(t.get("processedRows") or 0) for t in tasks)
        return {"route": name, "rows": rows, "seconds": seconds,
                "rows_per_s": rows / seconds if seconds else 0,
                "center_cpu": after[0] - before[0], "service_cpu": after[1] - before[1],
                "db_cpu": after[2] - before[2], "peak_rss_mb": peak / 1024.0,
                "status": ",".join(sorted({t["status"] for t in tasks})),
                "error": failed[0].get("failureMessage") if failed else None}


def writer_rows_per_second(build_dir, rows, work, repeat):
    """bench/xlsx_bench's render-only figure for our XLSX writer: the fastest
    of as many runs as each route gets (at least 3), so that the ratio does
    not favour the routes with the luck of their best run."""
    exe = os.path.join(build_dir, "bench", "xlsx_bench")
    if not os.path.exists(exe):
        log("NOTE: build/bench/xlsx_bench missing (needs libxlsxwriter): no writer ratio")
        return None
    best = None
    for _ in range(max(repeat, 3)):
        out = subprocess.check_output([exe, "--only", "ours", "--out", work, str(rows)],
                                      text=True)
        m = re.search(r"ours xlsx\s+rows=\d+\s+ok\s+[\d.]+ s\s+(\d+) rows/s", out)
        for f in os.listdir(work):
            if f.startswith("bench_ours_"):
                os.remove(os.path.join(work, f))
        if m:
            best = max(best or 0.0, float(m.group(1)))
    return best


def print_table(n, writer, results):
    print(f"\n== N = {n} customers and {n} orders; writer render-only "
          f"{writer:,.0f} rows/s" if writer else f"\n== N = {n}", flush=True)
    print(f"{'route':<42} {'rows':>8} {'s':>7} {'rows/s':>9} {'center':>7} {'service':>8}"
          f" {'db':>6} {'anon MB':>7} {'vs writer':>9}  status")
    for r in results:
        ratio = f"{100 * r['rows_per_s'] / writer:.0f} %" if writer else "-"
        print(f"{r['route']:<42} {r['rows']:>8} {r['seconds']:>7.2f} {r['rows_per_s']:>9,.0f}"
              f" {r['center_cpu']:>6.1f}s {r['service_cpu']:>7.1f}s {r['db_cpu']:>5.1f}s"
              f" {r['peak_rss_mb']:>7.1f} {ratio:>9}  {r['status']}"
              + (f" ({r['error']})" if r["error"] else ""), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--rows", default="200000", help="N, comma-separated (e.g. 200000,1000000)")
    p.add_argument("--datasources", default=",".join(DATASOURCES))
    p.add_argument("--routes", default=",".join(ROUTES))
    p.add_argument("--format", default="XLSX", choices=("XLSX", "CSV"))
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--concurrent", type=int, default=1, help="exports of each route at once")
    p.add_argument("--repeat", type=int, default=1, help="runs per route; the fastest is shown")
    p.add_argument("--compare", metavar="BUILD_DIR",
                   help="also run every route on this build's export-center, alternating "
                        "with --build-dir's run by run (before/after under the same load)")
    p.add_argument("--cache-dir",
                   default=os.environ.get("EXPORT_CENTER_BENCH_DIR", "/tmp/ec-bench"))
    p.add_argument("--covering-lookup-index", action="store_true",
                   help="give every replica the covering index the enrich SQL's customer lookup"
                        " can be answered from (docs/sql-template-route.md#enrichment)")
    p.add_argument("--statistics", default="both", choices=("both", "with", "without"),
                   help="run the *-status routes without replica statistics, with them, or both")
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--keep", action="store_true", help="keep the work folder")
    args = p.parse_args()
    args.datasources = [d for d in args.datasources.split(",") if d]
    args.routes = [r for r in args.routes.split(",") if r]
    for d in args.datasources:
        if d not in DATASOURCES:
            p.error(f"unknown datasource {d}; known: {', '.join(DATASOURCES)}")
    for r in args.routes:
        if r not in ROUTES:
            p.error(f"unknown route {r}; known: {', '.join(ROUTES)}")
    print(f"e2e_bench: {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}, format {args.format}, "
          f"batch size {args.batch_size}, {args.concurrent} export(s) at a time, "
          f"fastest of {args.repeat}"
          + (", covering lookup index" if args.covering_lookup_index else ""), flush=True)
    everything = []
    for n in (int(x) for x in args.rows.split(",")):
        bench = Bench(args, n)
        try:
            bench.start()
            writer = writer_rows_per_second(bench.build, n * 2 // 5, bench.work, args.repeat)
            results = []

            def run_sql_routes(routes, suffix=""):
                for kind, replica in bench.replicas.items():
                    for route in routes:
                        if route in args.routes:
                            query_id, tenant, parameters = SQL_ROUTES[route]
                            export = (f"{query_id}_{kind.upper()}", tenant, parameters)
                            results.extend(bench.run(f"{route} {kind}{suffix}", export, kind,
                                                     replica))

            # The replicas start without statistics: the status routes run
            # once so, then everything runs after ANALYZE.
            if args.statistics != "with":
                run_sql_routes(STATUS_ROUTES, " (no stats)")
            for replica in bench.replicas.values():
                replica.analyze()
            if "provider" in args.routes:
                results.extend(bench.run("provider CUSTOMER_LIST", ("CUSTOMER_LIST", TENANT, {}),
                                         "sqlite", None))
            run_sql_routes(("sql-callback", "sql-enrich-sql"))
            if args.statistics != "without":
                run_sql_routes(STATUS_ROUTES, " (stats)")
            print_table(n, writer, results)
            everything.append({"n": n, "writer_rows_per_s": writer, "results": results})
        finally:
            bench.stop()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(everything, f, indent=2)


if __name__ == "__main__":
    main()
