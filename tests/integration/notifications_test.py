"""Webhook notifications end to end (docs/notifications.md).

Starts the customer service and the built export-center with a `notifications:`
section pointing at a receiver this test runs on loopback (python's
http.server on a free port). The receiver answers 503 to the first two calls
of every event; the center is killed (-9) after the first failure and started
again. Then: exactly one accepted (2xx) delivery per event, every call signed
HMAC-SHA256(secret, timestamp + "." + body), the same event id on every call
of an event, and nothing more arrives afterwards. A receiver URL outside the
allow-list keeps the center from starting, with the key path in the message.

Run: /usr/bin/python3 notifications_test.py BUILD_DIR [-k NAME]
"""
import hashlib
import hmac
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Cluster, free_port  # noqa: E402

BUILD_DIR = None
SECRET = "webhook-secret-0123456789abcdef"
FAILURES_PER_EVENT = 2


class Receiver:
    """Records every call; answers 503 to the first FAILURES_PER_EVENT calls
    of each event id, then 200."""

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                event = self.headers.get("X-Export-Center-Event-Id", "")
                with receiver.lock:
                    seen = sum(1 for c in receiver.calls if c["event"] == event)
                    status = 503 if seen < FAILURES_PER_EVENT else 200
                    receiver.calls.append({
                        "event": event, "status": status, "body": body,
                        "timestamp": self.headers.get("X-Export-Center-Timestamp", ""),
                        "signature": self.headers.get("X-Export-Center-Signature", ""),
                        "attempt": self.headers.get("X-Export-Center-Attempt", ""),
                        "path": self.path, "at": time.time()})
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def snapshot(self):
        with self.lock:
            return list(self.calls)

    def wait(self, predicate, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate(self.snapshot()):
                return self.snapshot()
            time.sleep(0.1)
        raise AssertionError(f"receiver: {what} did not happen in {timeout}s: {self.snapshot()}")

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def notifications(port, **receiver):
    return {"notifications": {
        "allowed-targets": [f"127.0.0.1:{port}"],
        "backoff-seconds": [1],
        "poll-interval-ms": 200,
        "lease-seconds": 5,
        "connect-timeout-ms": 500,
        "timeout-ms": 1000,
        "receivers": {"ops-hook": {"url": f"http://127.0.0.1:{port}/hooks/export",
                                   "secret": SECRET, **receiver}}}}


def signed(call):
    expected = "sha256=" + hmac.new(SECRET.encode(), call["timestamp"].encode() + b"." +
                                    call["body"], hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, call["signature"])


class NotificationsTest(unittest.TestCase):
    def setUp(self):
        self.receiver = Receiver()
        self.cluster = None

    def tearDown(self):
        if self.cluster:
            self.cluster.cleanup()
        self.receiver.stop()

    def test_down_receiver_and_a_restart_get_exactly_one_accepted_delivery_per_event(self):
        self.cluster = Cluster(BUILD_DIR, prefix="ec-notify-", snapshot_binaries=True,
                               overrides=notifications(self.receiver.port)).start()
        c = self.cluster
        token = c.token("alice", "t1")
        done = c.create(token, name="notified export")["data"]
        c.wait_task(token, done["id"], states=("SUCCEEDED",))
        # A second event: a task cancelled right after create (or, if it
        # finished first, its success: either end is one event).
        other = c.create(token, parameters={"keyword": "科技"})["data"]
        c.api("POST", f"/export-tasks/{other['id']}/cancel", token)
        ended = c.wait_task(token, other["id"])

        # The first failure arrives; the center dies before the receiver is back.
        self.receiver.wait(lambda calls: any(x["status"] == 503 for x in calls), 30,
                           "a first 503")
        c.kill_center()
        restarted_at = time.time()
        c.start_center()

        calls = self.receiver.wait(
            lambda calls: sum(1 for x in calls if x["status"] == 200) >= 2, 60,
            "two accepted deliveries")
        # Nothing more arrives: delivered is final, restarts included.
        time.sleep(3)
        calls = self.receiver.snapshot()

        by_event = {}
        for call in calls:
            by_event.setdefault(call["event"], []).append(call)
        self.assertEqual(len(by_event), 2, calls)
        statuses = {}
        for event, event_calls in by_event.items():
            self.assertEqual([x["status"] for x in event_calls], [503, 503, 200], event_calls)
            self.assertEqual([x["attempt"] for x in event_calls], ["1", "2", "3"])
            self.assertGreater(event_calls[-1]["at"], restarted_at)  # accepted after the restart
            for call in event_calls:
                self.assertTrue(signed(call), call)
                self.assertEqual(call["path"], "/hooks/export")
                body = json.loads(call["body"])
                self.assertEqual(body["eventId"], event)
                self.assertEqual(body["eventType"], "export.task.ended")
            self.assertEqual(len({x["body"] for x in event_calls}), 1)  # the same payload
            task = json.loads(event_calls[0]["body"])["task"]
            statuses[task["taskId"]] = task
        self.assertEqual(statuses[done["id"]]["status"], "SUCCEEDED")
        self.assertTrue(statuses[done["id"]]["fileName"])
        self.assertGreater(statuses[done["id"]]["sizeBytes"], 0)
        self.assertEqual(statuses[done["id"]]["tenantId"], "t1")
        self.assertEqual(statuses[other["id"]]["status"], ended["status"])

        rows = c.db().query("SELECT status, attempt_count FROM export_notification")
        self.assertEqual(sorted((r["status"], int(r["attempt_count"])) for r in rows),
                         [("DELIVERED", 3), ("DELIVERED", 3)])
        # The restarted process counted what it tried (at least both successes).
        self.assertGreaterEqual(c.metrics()["export_notification_deliveries_total"], 2)

    def test_a_receiver_url_outside_the_allow_list_is_refused_at_config_load(self):
        self.cluster = Cluster(BUILD_DIR, prefix="ec-notify-",
                               overrides=notifications(self.receiver.port))
        c = self.cluster
        bad = notifications(self.receiver.port)
        bad["notifications"]["receivers"]["ops-hook"]["url"] = "http://127.0.0.1:9/internal"
        c.write_config(bad)
        r = subprocess.run([os.path.join(BUILD_DIR, "export-center"), "serve", "--config",
                            c.config], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        out = r.stdout + r.stderr
        self.assertIn("notifications.receivers.ops-hook.url: target \"127.0.0.1:9\" is not in "
                      "notifications.allowed-targets", out)
        self.assertEqual(self.receiver.snapshot(), [])


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
