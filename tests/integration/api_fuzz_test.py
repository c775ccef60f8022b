"""Property-based testing of the API from docs/openapi.json (docs/http-api.md#openapi-document).

Starts the built export-center (SQLite store, local storage, the sample
customer-service as provider and as the sql-template replica, so exports
really run on both routes: CUSTOMER_LIST and ORDER_LIST) and points
Schemathesis (pinned; scripts/install-api-fuzzer.sh) at it with a token that
holds every permission the API defines. Schemathesis reads only the document: it sends
the document's examples, boundary and negative values of every parameter and
body (coverage), random valid and invalid requests (fuzzing), and chains of
calls along the document's links (create → get, cancel, retry, download),
then checks each answer: no 5xx, a documented status, the documented content
type, headers and body schema; and, through api_fuzz_checks.py, no 5xx hidden
in an envelope, HttpError codes equal to their status, negative data refused,
the token enforced. Seeded and derandomized with a fixed example count
(schemathesis.toml), so a run repeats the same requests (about 1,200); about
100 s. The center must still be up at the end.

TheRunCanFail proves the run can fail: the same configuration against a stub
that answers 500, one that hides a 500 in an HTTP 200 envelope, and one that
answers a token-protected operation without a token.

Run: /usr/bin/python3 api_fuzz_test.py BUILD_DIR
"""
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from harness import Cluster  # noqa: E402

BUILD_DIR = None
DOC_PATH = os.path.join(REPO, "docs", "openapi.json")
CONFIG = os.path.join(HERE, "schemathesis.toml")
HOOKS = os.path.join(HERE, "api_fuzz_checks.py")
# Every permission the API and the two export types define.
PERMS = ("platform:customer:export", "platform:order:export", "platform:download:all",
         "platform:audit:read")


def order_list_overrides(cluster_dir):
    """ORDER_LIST beside CUSTOMER_LIST: the sql-template route (the MyBatis
    template, typed parameters, the customer service's SQLite file as the
    replica), so fuzzed parameters reach the template engine too."""
    parameters = [
        {"name": "status", "type": "STRING",
         "allowed": ["NEW", "PAID", "SHIPPED", "DONE", "REFUNDED"]},
        {"name": "channel", "type": "STRING", "allowed": ["WEB", "APP", "STORE"]},
        {"name": "dateFrom", "type": "DATE"},
        {"name": "dateTo", "type": "DATE"},
        {"name": "keyword", "type": "STRING"},
        {"name": "customerCodes", "type": "STRING_LIST"},
    ]
    return {
        "customer-service": {"seed-orders": 300},
        "datasources": {"replica": {"kind": "sqlite",
                                    "sqlite-path": os.path.join(cluster_dir, "customers.db")}},
        "definitions": {"ORDER_LIST": {
            "title": "订单列表", "source": "sql-template", "provider-service": "customer-service",
            "query-id": "ORDER_LIST", "datasource": "replica", "consistency": "lenient",
            "required-permission": "platform:order:export", "app-scope": "PLATFORM",
            "max-rows": 200000, "batch-size": 100, "timezone": "Asia/Shanghai",
            "parameters": parameters}},
    }


RUN_TIMEOUT_S = 360  # the hard bound; a run takes about 100 s, 200 s on a loaded machine

FUZZER_DIR = subprocess.check_output(
    [os.path.join(REPO, "scripts", "install-api-fuzzer.sh")], text=True).strip()


def run_schemathesis(base_url, token, *extra, timeout=RUN_TIMEOUT_S):
    """`st run` on docs/openapi.json with schemathesis.toml; (exit code, output)."""
    env = {**os.environ, "PYTHONPATH": FUZZER_DIR, "EC_API_FUZZ_BASE_URL": base_url,
           "EC_API_FUZZ_TOKEN": token, "EC_API_FUZZ_HOOKS": HOOKS, "NO_COLOR": "1",
           "SCHEMATHESIS_TELEMETRY": "false"}
    with tempfile.TemporaryDirectory(prefix="ec-api-fuzz-") as cwd:  # its report folder
        r = subprocess.run([sys.executable, "-m", "schemathesis.cli", "--config-file", CONFIG,
                            "--no-color", "run", DOC_PATH, *extra],
                           cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


class ApiFuzz(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=60, prefix="ec-api-fuzz-")
        try:
            cls.c.write_config(order_list_overrides(cls.c.dir))
            cls.c.start()
            cls.token = cls.c.token("fuzzer", "1", perms=PERMS)
            # A finished export per route, so listings, downloads and the audit have rows.
            cls.c.export_file(cls.token, "CUSTOMER_LIST", {}, "CSV")
            cls.c.export_file(cls.token, "ORDER_LIST", {"status": "PAID"}, "XLSX")
        except BaseException:
            cls.c.cleanup()  # unittest does not call tearDownClass when setUpClass fails
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def test_no_5xx_and_no_answer_that_breaks_the_document(self):
        started = time.monotonic()
        code, out = run_schemathesis(self.c.base, self.token)
        elapsed = time.monotonic() - started
        # A failing run prints every failure with its curl line; a green one its summary.
        print(out[:60000] if code != 0 else out[-2500:], file=sys.stderr)
        print(f"schemathesis ran {elapsed:.0f} s", file=sys.stderr)
        self.assertIsNone(self.c.center.poll(), "the center died during the run")
        log = self.c.log()
        self.assertNotIn("terminate called", log)
        # No request wrote a line of its own into the log (a path's %0A once did).
        stray = [line for line in log.rstrip("\n").split("\n")
                 if not line.startswith("[") and not line.startswith("export-center listening")]
        self.assertEqual(stray[:5], [], "log lines written by a request")
        self.assertEqual(code, 0, "schemathesis found failures (above)")
        # It really tested: every operation of the document was requested.
        selected, total = map(int, re.search(r"Operations:\s+(\d+) selected / (\d+) total",
                                             out).groups())
        self.assertEqual(selected, total, "operations left out of the run")
        self.assertNotIn("No test cases were generated", out)


HEALTHY = (200, {"code": "200", "message": "success",
           "data": {"status": "UP", "version": "1.0.0", "commit": "0123456789ab"}})
NO_TYPES = (200, {"code": "200", "message": "success", "data": []})


class StubHandler(http.server.BaseHTTPRequestHandler):
    """Answers every GET with `answer`: (status, envelope), whatever the
    request (its Authorization included)."""

    answer = None

    def do_GET(self):
        status, envelope = self.answer
        body = json.dumps(envelope).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("X-Request-Id", "stub")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class TheRunCanFail(unittest.TestCase):
    """The same configuration and checks, one operation, against a stub."""

    def run_against_stub(self, answer, operation="healthz"):
        StubHandler.answer = answer
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubHandler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            return run_schemathesis(f"http://127.0.0.1:{server.server_port}", "stub.token.sig",
                                    "--include-operation-id", operation, "--phases",
                                    "examples,fuzzing", timeout=120)
        finally:
            server.shutdown()
            server.server_close()

    def test_a_healthy_stub_passes(self):
        code, out = self.run_against_stub(HEALTHY)
        self.assertEqual(code, 0, out[-3000:])

    def test_a_500_fails_the_run(self):
        code, out = self.run_against_stub(
            (500, {"code": "500", "message": "internal error", "data": None}))
        self.assertNotEqual(code, 0, out[-3000:])
        self.assertIn("Server error", out)

    def test_a_500_inside_an_http_200_envelope_fails_the_run(self):
        code, out = self.run_against_stub(
            (200, {"code": "500", "message": "internal error", "data": None}))
        self.assertNotEqual(code, 0, out[-3000:])
        self.assertIn("carries a server error in its envelope", out)

    def test_an_operation_that_ignores_its_token_fails_the_run(self):
        code, out = self.run_against_stub(NO_TYPES, operation="listExportTypes")
        self.assertNotEqual(code, 0, out[-3000:])
        self.assertIn("requires the bearer token, yet with no token", out)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
