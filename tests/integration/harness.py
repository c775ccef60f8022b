"""Starts the built binaries on free loopback ports for end-to-end tests.

Used by the tests in this folder; every server started here is stopped by its
own pid when the test ends.

The helpers every script shares (free ports, HTTP calls, waits, the end
states, ScriptServer) are in tests/pylib/export_center_testkit/ and
re-exported here. Beyond them, a Cluster can take config overrides (a nested dict
deep-merged into the default config), kill -9 and restart the center, start
extra centers on the same database and storage, and read or rewrite the
task/outbox rows directly (SQLite through python's sqlite3, PostgreSQL through
psql, MySQL/MariaDB through the mariadb client) for fault injection.
"""
import base64
import copy
import csv
import hashlib
import hmac
import http.client
import io
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
import urllib.parse

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
# Re-exported: the tests here import these from the harness.
from export_center_testkit import (ENDED, PROVIDER_ENDED, REPO, Response,  # noqa: E402,F401
                                   ScriptServer, free_port, request, wait_http)

API = "/api/platform/v1/files"


def rocketmq_channel(namesrv, prefix, **extra):
    """Config overrides for channel.kind: rocketmq."""
    return {"channel": {"kind": "rocketmq",
                        "rocketmq": {"namesrv-addr": namesrv, "topic-prefix": prefix, **extra}}}


CONFIG_TEMPLATE = """
server:
  host: 127.0.0.1
  port: {center_port}
database:
  kind: sqlite
  sqlite-path: {dir}/center.db
storage:
  kind: local
  root: {dir}/files
auth:
  jwt-hs256-secret: e2e-secret-0123456789-0123456789
  download-url-secret: e2e-download-secret-0123456789
  jwt-issuer: e2e-issuer
  jwt-audience: export-center
consumer:
  concurrency: {concurrency}
  heartbeat-seconds: 2
  lease-seconds: 30
  retry-backoff-seconds: [1, 2]
publisher:
  poll-interval-ms: 200
reconciler:
  interval-seconds: 2
provider:
  read-timeout-ms: {read_timeout_ms}
provider-services:
  customer-service:
    base-url: http://127.0.0.1:{provider_port}
    internal-token: e2e-internal-token
definitions:
  CUSTOMER_LIST:
    title: 客户列表
    source: provider
    provider-service: customer-service
    provider-path: /internal/exports/v1/CUSTOMER_LIST/batches
    required-permission: platform:customer:export
    app-scope: PLATFORM
    max-rows: 200000
    batch-size: 500
    parameters:
      - name: keyword
        type: STRING
      - name: status
        type: STRING
        allowed: [ACTIVE, INACTIVE, FROZEN]
customer-service:
  host: 127.0.0.1
  port: {provider_port}
  sqlite-path: {dir}/customers.db
  internal-token: e2e-internal-token
  snapshot-secret: e2e-snapshot-secret-0123456789abcdef
  seed-customers: {seed}
"""


def deep_merge(base, overrides):
    """A copy of `base` with `overrides` merged in; None as a value deletes the key."""
    out = copy.deepcopy(base)
    for key, value in (overrides or {}).items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


INTEGER = re.compile(r"-?[0-9]+")


class SqliteDb:
    """Direct access to the center's SQLite file (WAL: safe beside the center)."""

    kind = "sqlite"
    NOW = "(CAST(strftime('%s','now') AS INTEGER) * 1000)"

    def __init__(self, path):
        self.path = path

    def query(self, sql, params=()):
        """Rows as dicts."""
        con = sqlite3.connect(self.path, timeout=30)
        try:
            con.row_factory = sqlite3.Row
            return [dict(r) for r in con.execute(sql, params).fetchall()]
        finally:
            con.close()

    def execute(self, sql, params=()):
        """One statement in its own transaction; returns the changed row count."""
        con = sqlite3.connect(self.path, timeout=30)
        try:
            with con:
                return con.execute(sql, params).rowcount
        finally:
            con.close()


def _sql_literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


class PostgresDb:
    """The same calls against PostgreSQL through psql (no python driver needed).
    `?` placeholders are replaced by quoted literals; NULL and '' both read as None."""

    kind = "postgres"
    NOW = "(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT)"

    def __init__(self, url):
        self.url = url

    def _bind(self, sql, params):
        parts = sql.split("?")
        if len(parts) - 1 != len(params):
            raise ValueError(f"{len(params)} parameters for {len(parts) - 1} placeholders")
        out = parts[0]
        for value, part in zip(params, parts[1:]):
            out += _sql_literal(value) + part
        return out

    def _psql(self, sql, params, csv_out):
        args = ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", self.url]
        if csv_out:
            args += ["-q", "--csv"]  # -q only here: execute reads the "UPDATE n" tag
        args += ["-c", self._bind(sql, params)]
        return subprocess.run(args, check=True, capture_output=True, text=True, timeout=60).stdout

    def query(self, sql, params=()):
        text = self._psql(sql, params, csv_out=True)
        rows = list(csv.reader(io.StringIO(text)))
        if not rows:
            return []
        header = rows[0]
        out = []
        for row in rows[1:]:
            out.append({k: (None if v == "" else int(v) if INTEGER.fullmatch(v) else v)
                        for k, v in zip(header, row)})
        return out

    def execute(self, sql, params=()):
        text = self._psql(sql, params, csv_out=False)
        m = re.search(r"(UPDATE|DELETE|INSERT 0) ([0-9]+)", text)
        return int(m.group(2)) if m else 0


class MariaDb:
    """The same calls against MySQL/MariaDB through the mariadb command-line
    client (no python driver needed). `?` placeholders are replaced by quoted
    literals; NULL reads as None. Sessions run in UTC, as the center's do."""

    kind = "mysql"
    NOW = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
    URL = re.compile(r"(?:mysql|mariadb)://(?:([^:@/]*)(?::([^@/]*))?@)?"
                     r"([^:/@]+)(?::([0-9]+))?/([A-Za-z0-9_]+)")
    UNESCAPE = {"n": "\n", "t": "\t", "0": "\0", "\\": "\\"}

    def __init__(self, url):
        m = self.URL.fullmatch(url)
        if not m:
            raise ValueError(f"not a MySQL URL the tests understand: {url}")
        self.user, password, self.host, port, self.database = m.groups()
        self.user = self.user or "root"
        self.password = password or ""
        self.port = port or "3306"

    @staticmethod
    def _literal(value):
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
        return _sql_literal(value)

    def _bind(self, sql, params):
        parts = sql.split("?")
        if len(parts) - 1 != len(params):
            raise ValueError(f"{len(params)} parameters for {len(parts) - 1} placeholders")
        out = parts[0]
        for value, part in zip(params, parts[1:]):
            out += self._literal(value) + part
        return out

    def _client(self, sql):
        args = ["mariadb", "--no-defaults", "--protocol=tcp", "-h", self.host, "-P", self.port,
                "-u", self.user, "--batch", "--default-character-set=utf8mb4", self.database,
                "-e", "SET time_zone = '+00:00'; " + sql]
        env = {**os.environ, "MYSQL_PWD": self.password}
        return subprocess.run(args, check=True, capture_output=True, text=True, timeout=60,
                              env=env).stdout

    def _cell(self, text):
        if text == "NULL":
            return None
        if INTEGER.fullmatch(text):
            return int(text)
        return re.sub(r"\\(.)", lambda m: self.UNESCAPE.get(m.group(1), m.group(1)), text)

    def query(self, sql, params=()):
        return self._rows(self._bind(sql, params))

    def _rows(self, bound_sql):
        lines = self._client(bound_sql).split("\n")
        lines = [line for line in lines if line]
        if not lines:
            return []
        header = lines[0].split("\t")
        return [dict(zip(header, (self._cell(v) for v in line.split("\t"))))
                for line in lines[1:]]

    def execute(self, sql, params=()):
        """One statement (autocommit); returns the rows it changed."""
        rows = self._rows(self._bind(sql, params) + "; SELECT ROW_COUNT() AS n")
        return rows[-1]["n"] if rows else 0


class TaskStream:
    """GET /export-tasks/events held open on its own thread: every event's
    data, decoded as strict UTF-8 JSON (a decoding error is kept and fails
    the test), and whether the stream is still open."""

    def __init__(self, port, token=None, ticket=None):
        """With `token` in the Authorization header, or with a `ticket` from
        POST /export-tasks/events-ticket in the query, as the page does."""
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        path = API + "/export-tasks/events"
        if ticket:
            path += "?ticket=" + urllib.parse.quote(ticket, safe="")
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()
        if self.response.status != 200:
            raise AssertionError(f"events: HTTP {self.response.status}")
        self.events = []
        self.reauth = None  # the data of the last `event: reauth`, once sent
        self.errors = []
        self.open = True
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        name = b"message"
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                if line.startswith(b"event: "):
                    name = line[len(b"event: "):].strip()
                elif line in (b"\n", b"\r\n"):
                    name = b"message"
                if line.startswith(b"data: ") and name == b"reauth":
                    with self.lock:
                        self.reauth = json.loads(line[len(b"data: "):].decode("utf-8"))
                elif line.startswith(b"data: "):
                    try:
                        event = json.loads(line[len(b"data: "):].decode("utf-8"))
                    except ValueError as e:  # UnicodeDecodeError included
                        with self.lock:
                            self.errors.append(f"{e}: {line[:200]!r}")
                        continue
                    with self.lock:
                        self.events.append(event)
        except Exception as e:  # the center went away, or the stream broke
            with self.lock:
                self.errors.append(f"stream: {e!r}")
        self.open = False

    def wait_for(self, task_id, status, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                for event in self.events:
                    if event["id"] == task_id and event["status"] == status:
                        return event
            if not self.open:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {status} event for task {task_id} on the stream "
                             f"(open: {self.open}, errors: {self.errors})")

    def has(self, task_id):
        """Whether any event of the task has arrived."""
        with self.lock:
            return any(event["id"] == task_id for event in self.events)

    def close(self):
        self.conn.close()


def parse_metrics(text):
    """Prometheus text -> {name: summed value over every label set}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
    return out


class Cluster:
    """The center plus the sample customer service, in a temp directory.

    `overrides` (a nested dict) is deep-merged into the default config, e.g.
    {"consumer": {"lease-seconds": 10}}; None as a value removes a key."""

    def __init__(self, build_dir, seed=3000, concurrency=4, read_timeout_ms=15000,
                 overrides=None, prefix="ec-e2e-", snapshot_binaries=False):
        self.build_dir = build_dir
        self.dir = tempfile.mkdtemp(prefix=prefix)
        if snapshot_binaries:
            # Tests that restart the center many times run a private copy, so
            # that a rebuild in the shared build folder (the linker rewrites
            # the file) cannot break a restart halfway through the test.
            self.build_dir = os.path.join(self.dir, "bin")
            os.makedirs(self.build_dir)
            for binary in ("export-center", "customer-service"):
                shutil.copy2(os.path.join(build_dir, binary), self.build_dir)
        self.center_port = free_port()
        self.provider_port = free_port()
        self.config = os.path.join(self.dir, "config.yaml")
        self._base_text = CONFIG_TEMPLATE.format(dir=self.dir, center_port=self.center_port,
                                                 provider_port=self.provider_port, seed=seed,
                                                 concurrency=concurrency,
                                                 read_timeout_ms=read_timeout_ms)
        self.overrides = overrides or {}
        self.write_config(self.overrides)
        self.center = None
        self.provider = None
        self.extra = []  # extra centers started by start_extra_center
        self.base = f"http://127.0.0.1:{self.center_port}"
        self.provider_base = f"http://127.0.0.1:{self.provider_port}"

    # ---- config ----------------------------------------------------------------

    def config_dict(self, overrides=None):
        return deep_merge(yaml.safe_load(self._base_text), overrides)

    def write_config(self, overrides=None, path=None):
        """(Re)writes the center's config (or another file) with these overrides."""
        path = path or self.config
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            if overrides:
                yaml.safe_dump(self.config_dict(overrides), f, allow_unicode=True,
                               sort_keys=False)
            else:
                f.write(self._base_text)
        os.replace(tmp, path)  # atomic: the config watcher never sees half a file
        if path == self.config:
            self.overrides = overrides or {}
        return path

    @property
    def storage_root(self):
        return self.config_dict(self.overrides)["storage"]["root"]

    def db(self):
        database = self.config_dict(self.overrides)["database"]
        if database.get("kind") == "postgres":
            return PostgresDb(database["postgres-url"])
        if database.get("kind") == "mysql":
            return MariaDb(database["mysql-url"])
        return SqliteDb(database["sqlite-path"])

    # ---- processes -------------------------------------------------------------

    def _spawn(self, binary, *args, log, env=None):
        with open(os.path.join(self.dir, log), "ab") as out:
            return subprocess.Popen([os.path.join(self.build_dir, binary), *args],
                                    stdout=out, stderr=subprocess.STDOUT,
                                    env=None if env is None else {**os.environ, **env})

    def start_provider(self):
        self.provider = self._spawn("customer-service", "--config", self.config,
                                    log="customer-service.log")
        wait_http(self.provider_base + "/healthz", self.provider)

    def start_center(self, env=None):
        self.center = self._spawn("export-center", "serve", "--config", self.config,
                                  log="center.log", env=env)
        wait_http(self.base + "/healthz", self.center, timeout=60)

    def start(self):
        self.start_provider()
        self.start_center()
        return self

    def stop_center(self, sig=signal.SIGTERM):
        if self.center and self.center.poll() is None:
            self.center.send_signal(sig)
            self.center.wait(timeout=90)
        self.center = None

    def kill_center(self):
        """kill -9 of the center, by its pid."""
        self.stop_center(sig=signal.SIGKILL)

    def start_extra_center(self, overrides, name, env=None):
        """Another center on its own port with its own config file (same
        database and storage unless overridden). Stopped by stop()."""
        port = free_port()
        over = deep_merge(self.overrides, overrides)
        over = deep_merge(over, {"server": {"port": port}, "instance-id": name})
        path = self.write_config(over, path=os.path.join(self.dir, f"{name}.yaml"))
        proc = self._spawn("export-center", "serve", "--config", path, log=f"{name}.log",
                           env=env)
        self.extra.append(proc)
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=60)
        return proc, port

    def stop(self):
        for proc in self.extra:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        self.extra = []
        self.stop_center()
        if self.provider and self.provider.poll() is None:
            self.provider.terminate()
            self.provider.wait(timeout=30)
        self.provider = None

    def cleanup(self):
        self.stop()
        if os.environ.get("EC_KEEP_TEST_DIR"):
            print("kept", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def log(self, name="center.log"):
        with open(os.path.join(self.dir, name), encoding="utf-8", errors="replace") as f:
            return f.read()

    def rocketmq_init(self, timeout=120, env=None):
        """`export-center rocketmq init` with the center's config: the topics
        and groups its channel needs."""
        r = subprocess.run([os.path.join(self.build_dir, "export-center"), "rocketmq", "init",
                            "--config", self.config], capture_output=True, text=True,
                           timeout=timeout, env=None if env is None else {**os.environ, **env})
        if r.returncode != 0:
            raise RuntimeError(f"rocketmq init failed ({r.returncode}): {r.stderr}{r.stdout}")
        return r.stdout

    def token(self, user, tenant, perms=("platform:customer:export",), app="PLATFORM", ttl=3600):
        args = [os.path.join(self.build_dir, "export-center"), "token", "--config", self.config,
                "--user", user, "--tenant", tenant, "--app", app, "--ttl", str(ttl)]
        for p in perms:
            args += ["--perm", p]
        return subprocess.check_output(args, text=True).strip()

    def expired_token(self, user, tenant, perms=("platform:customer:export",), app="PLATFORM",
                      seconds_ago=60):
        """An HS256 token of this config's secret, issuer and audience whose exp
        passed `seconds_ago` (past the 30 s auth.jwt-leeway-seconds by default):
        `export-center token` mints only live ones."""
        auth = self.config_dict(self.overrides)["auth"]

        def b64(data):
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        now = int(time.time())
        claims = {"sub": user, "tenant_id": tenant, "app_code": app, "perms": list(perms),
                  "iss": auth["jwt-issuer"], "aud": auth["jwt-audience"],
                  "iat": now - seconds_ago - 60, "exp": now - seconds_ago}
        signed = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + \
            b64(json.dumps(claims).encode())
        mac = hmac.new(auth["jwt-hs256-secret"].encode(), signed.encode(), hashlib.sha256)
        return signed + "." + b64(mac.digest())

    def api(self, method, path, token=None, body=None, **kw):
        return request(method, self.base + API + path, token=token, body=body, **kw)

    def create(self, token, export_type="CUSTOMER_LIST", parameters=None, fmt=None, name=None):
        body = {"exportType": export_type, "parameters": parameters or {}}
        if fmt:
            body["format"] = fmt
        if name:
            body["taskName"] = name
        return self.api("POST", "/export-tasks", token, body).json()

    def wait_task(self, token, task_id, states=PROVIDER_ENDED, timeout=180):
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.api("GET", f"/export-tasks/{task_id}", token).json()
            if r["code"] == "200" and r["data"]["status"] in states:
                return r["data"]
            time.sleep(0.1)
        raise AssertionError(f"task {task_id} did not reach {states}: {r}")

    def export_file(self, token, export_type, parameters, fmt, timeout=180):
        """Creates an export, waits for SUCCEEDED and downloads it: (task, file
        bytes); an AssertionError with the answer when any step fails."""
        created = self.create(token, export_type=export_type, parameters=parameters, fmt=fmt)
        if created["code"] != "200":
            raise AssertionError(f"create {export_type}: {created}")
        task = self.wait_task(token, created["data"]["id"], timeout=timeout,
                              states=ENDED)
        if task["status"] != "SUCCEEDED":
            raise AssertionError(f"export {export_type} ended {task['status']}: {task}")
        r = self.api("GET", f"/export-tasks/{task['id']}/download", token)
        if r.status != 200:
            raise AssertionError(f"download of task {task['id']}: {r.status} {r.body[:300]!r}")
        return task, r.body

    def faults(self, **faults):
        r = request("POST", self.provider_base + "/admin/faults", body=faults,
                    headers={"X-Internal-Service-Token": "e2e-internal-token"})
        assert r.status == 200, r.body

    def provider_stats(self):
        r = request("GET", self.provider_base + "/admin/stats",
                    headers={"X-Internal-Service-Token": "e2e-internal-token"})
        assert r.status == 200, r.body
        return r.json()["data"]

    def metrics(self, base=None):
        r = request("GET", (base or self.base) + "/metrics")
        assert r.status == 200, r.body
        return parse_metrics(r.body.decode("utf-8"))

    # ---- rows and files ----------------------------------------------------------

    def task_row(self, task_id):
        rows = self.db().query("SELECT * FROM export_task WHERE id = ?", (int(task_id),))
        return rows[0] if rows else None

    def outbox_rows(self, task_id):
        return self.db().query("SELECT * FROM export_outbox WHERE task_id = ?"
                               " ORDER BY dispatch_version, id", (int(task_id),))

    def stored_files(self):
        """Every file under storage root/exports, hidden temp files included,
        as paths relative to the storage root."""
        root = self.storage_root
        out = []
        for dirpath, _, names in os.walk(os.path.join(root, "exports")):
            for n in names:
                out.append(os.path.relpath(os.path.join(dirpath, n), root))
        return sorted(out)

    def wait_row(self, task_id, predicate, timeout=60, what="condition"):
        """Polls the task row until predicate(row) holds; returns the row."""
        deadline = time.time() + timeout
        row = None
        while time.time() < deadline:
            row = self.task_row(task_id)
            if row is not None and predicate(row):
                return row
            time.sleep(0.05)
        raise AssertionError(f"task {task_id}: {what} not reached in {timeout}s; last row {row}")
