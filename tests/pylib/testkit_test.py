"""Tests of export_center_testkit, and that the scripts use it instead of
keeping copies of its helpers.

Run: /usr/bin/python3 tests/pylib/testkit_test.py
"""
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_center_testkit import (ACTIVE, ENDED, EXPIRED, PROVIDER_ENDED, REPO,  # noqa: E402
                                   free_port, previous_release, project_version, releases,
                                   request, source_commit, wait_http, wait_until)

# The scripts that start the binaries: each imports the helpers from the package.
USERS = ["tests/integration/harness.py", "scripts/fleet.py", "bench/e2e_bench.py",
         "tests/deploy/alert_rules_test.py"]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        status = 503 if self.path == "/busy" else 404 if self.path == "/missing" else 200
        body = json.dumps({"path": self.path,
                           "authorization": self.headers.get("Authorization")}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(201)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}"
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def test_request_sends_the_token_and_reads_json(self):
        r = request("GET", self.base + "/x", token="t0k")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.is_json())
        self.assertEqual(r.json(), {"path": "/x", "authorization": "Bearer t0k"})

    def test_an_error_status_is_a_response_not_an_exception(self):
        r = request("GET", self.base + "/missing")
        self.assertEqual(r.status, 404)
        self.assertIsNone(r.json()["authorization"])

    def test_a_body_is_sent_as_utf8_json(self):
        r = request("POST", self.base + "/echo", body={"name": "客户"})
        self.assertEqual(r.status, 201)
        self.assertFalse(r.is_json())
        self.assertEqual(json.loads(r.body.decode("utf-8")), {"name": "客户"})
        self.assertIn("客户".encode("utf-8"), r.body)

    def test_wait_http_takes_any_answer_unless_told_otherwise(self):
        wait_http(self.base + "/busy", timeout=5)
        with self.assertRaisesRegex(RuntimeError, "did not answer"):
            wait_http(self.base + "/busy", timeout=0.5, any_status=False)
        wait_http(self.base + "/ok", timeout=5, any_status=False)


class HelpersTest(unittest.TestCase):
    def test_free_port_can_be_bound(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", free_port()))

    def test_wait_http_stops_when_the_process_exits(self):
        proc = subprocess.Popen([sys.executable, "-c", "pass"])
        proc.wait()
        with self.assertRaisesRegex(RuntimeError, "exited with 0"):
            wait_http(f"http://127.0.0.1:{free_port()}/", proc, timeout=30)

    def test_wait_until_returns_the_value_or_names_what_it_waited_for(self):
        calls = []
        self.assertEqual(wait_until(lambda: calls.append(1) or len(calls) >= 3 and "done",
                                    interval=0.01), "done")
        with self.assertRaisesRegex(AssertionError, "the moon"):
            wait_until(lambda: False, timeout=0.05, interval=0.01, what="the moon")

    def test_the_state_lists_are_the_task_states_of_the_code(self):
        with open(os.path.join(REPO, "src", "task", "task.cc"), encoding="utf-8") as f:
            code = set(re.findall(r'\{TaskState::k\w+, "([A-Z]+)"\}', f.read()))
        self.assertEqual(len(code), 8)
        self.assertEqual(set(ACTIVE) | set(ENDED) | {EXPIRED}, code)
        self.assertEqual(len(ACTIVE) + len(ENDED) + 1, len(code))  # disjoint
        self.assertLess(set(PROVIDER_ENDED), set(ENDED))
        self.assertEqual(set(ENDED) - set(PROVIDER_ENDED), {"STALE", "INCONSISTENT"})


class ReleaseTest(unittest.TestCase):
    def test_the_version_and_releases_are_read_from_their_one_place(self):
        self.assertRegex(project_version(), r"^\d+\.\d+\.\d+$")
        rows = releases()
        self.assertTrue(rows)
        for version, commit in rows:
            self.assertRegex(version, r"^\d+\.\d+\.\d+$")
            self.assertRegex(commit, r"^[0-9a-f]{40}$")
        self.assertIn(previous_release(), rows)
        self.assertNotEqual(previous_release()[0], project_version())

    def test_the_commit_is_unknown_outside_the_top_of_a_checkout(self):
        self.assertRegex(source_commit(), r"^([0-9a-f]{12}|unknown)$")
        self.assertEqual(source_commit(os.path.join(REPO, "tests")), "unknown")


class OneCopyTest(unittest.TestCase):
    """The helpers exist once: the scripts import them and keep no copy."""

    def python_files(self):
        for top in ("tests", "scripts", "bench"):
            for dirpath, _, names in os.walk(os.path.join(REPO, top)):
                if os.path.join("tests", "pylib") in dirpath:
                    continue
                for n in names:
                    if n.endswith(".py"):
                        yield os.path.relpath(os.path.join(dirpath, n), REPO)

    def test_no_script_defines_its_own_helper(self):
        copies = []
        for rel in self.python_files():
            with open(os.path.join(REPO, rel), encoding="utf-8") as f:
                text = f.read()
            for name in ("free_port", "wait_http", "request"):
                if re.search(rf"^def {name}\(", text, re.M):
                    copies.append(f"{rel}: def {name}")
            if re.search(r'\(\s*"SUCCEEDED",\s*"FAILED",\s*"CANCELLED"', text):
                copies.append(f"{rel}: a list of end states")
        self.assertEqual(copies, [])

    def test_the_scripts_import_the_package(self):
        for rel in USERS:
            with open(os.path.join(REPO, rel), encoding="utf-8") as f:
                self.assertTrue("from export_center_testkit import" in f.read(), rel)


if __name__ == "__main__":
    unittest.main()
