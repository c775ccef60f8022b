"""Starts the built binaries on free loopback ports for end-to-end tests.

Used by the tests in this folder; every server started here is stopped by its
own pid when the test ends.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

API = "/api/platform/v1/files"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, proc, timeout=180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means it is up
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer in {timeout}s")


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))


def request(method, url, token=None, body=None, headers=None, raw=None):
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    data = raw
    if body is not None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return Response(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read())


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
  snapshot-secret: e2e-snapshot-secret
  seed-customers: {seed}
"""


class Cluster:
    """The center plus the sample customer service, in a temp directory."""

    def __init__(self, build_dir, seed=3000, concurrency=4, read_timeout_ms=15000):
        self.build_dir = build_dir
        self.dir = tempfile.mkdtemp(prefix="ec-e2e-")
        self.center_port = free_port()
        self.provider_port = free_port()
        self.config = os.path.join(self.dir, "config.yaml")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(CONFIG_TEMPLATE.format(dir=self.dir, center_port=self.center_port,
                                           provider_port=self.provider_port, seed=seed,
                                           concurrency=concurrency,
                                           read_timeout_ms=read_timeout_ms))
        self.center = None
        self.provider = None
        self.base = f"http://127.0.0.1:{self.center_port}"
        self.provider_base = f"http://127.0.0.1:{self.provider_port}"

    def _spawn(self, binary, *args, log):
        with open(os.path.join(self.dir, log), "ab") as out:
            return subprocess.Popen([os.path.join(self.build_dir, binary), *args],
                                    stdout=out, stderr=subprocess.STDOUT)

    def start_provider(self):
        self.provider = self._spawn("customer-service", "--config", self.config,
                                    log="customer-service.log")
        wait_http(self.provider_base + "/healthz", self.provider)

    def start_center(self):
        self.center = self._spawn("export-center", "serve", "--config", self.config,
                                  log="center.log")
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

    def stop(self):
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

    def token(self, user, tenant, perms=("platform:customer:export",), app="PLATFORM", ttl=3600):
        args = [os.path.join(self.build_dir, "export-center"), "token", "--config", self.config,
                "--user", user, "--tenant", tenant, "--app", app, "--ttl", str(ttl)]
        for p in perms:
            args += ["--perm", p]
        return subprocess.check_output(args, text=True).strip()

    def api(self, method, path, token=None, body=None, **kw):
        return request(method, self.base + API + path, token=token, body=body, **kw)

    def create(self, token, export_type="CUSTOMER_LIST", parameters=None, fmt=None, name=None):
        body = {"exportType": export_type, "parameters": parameters or {}}
        if fmt:
            body["format"] = fmt
        if name:
            body["taskName"] = name
        return self.api("POST", "/export-tasks", token, body).json()

    def wait_task(self, token, task_id, states=("SUCCEEDED", "FAILED", "CANCELLED"), timeout=180):
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.api("GET", f"/export-tasks/{task_id}", token).json()
            if r["code"] == "200" and r["data"]["status"] in states:
                return r["data"]
            time.sleep(0.1)
        raise AssertionError(f"task {task_id} did not reach {states}: {r}")

    def faults(self, **faults):
        r = request("POST", self.provider_base + "/admin/faults", body=faults,
                    headers={"X-Internal-Service-Token": "e2e-internal-token"})
        assert r.status == 200, r.body
