"""The OpenAPI document (docs/openapi.json) against the running server.

Starts the built export-center with its real SQLite store and local storage
and the sample customer-service as provider, makes real requests that cover
every documented operation and the main error answers, and validates each
real response (status, content type, headers, body) against the document with
openapi-core (pinned; scripts/install-openapi-validator.sh). The document
itself is validated with openapi-spec-validator, and /openapi.json must serve
the file byte for byte.

Run: /usr/bin/python3 openapi_test.py BUILD_DIR
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from harness import API, Cluster, ScriptServer, request  # noqa: E402

# The validator lives in the deps folder; the script installs it if missing.
sys.path.insert(0, subprocess.check_output(
    [os.path.join(REPO, "scripts", "install-openapi-validator.sh")], text=True).strip())
import jsonschema  # noqa: E402
from openapi_core import OpenAPI  # noqa: E402
from openapi_core.testing import MockRequest, MockResponse  # noqa: E402
from openapi_spec_validator import validate as validate_spec  # noqa: E402

BUILD_DIR = None
DOC_PATH = os.path.join(REPO, "docs", "openapi.json")
DOWNLOAD_SECRET = b"e2e-download-secret-0123456789"  # harness.CONFIG_TEMPLATE
PERM = "platform:customer:export"
METRICS_TOKEN = "openapi-test-metrics-token"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_link(grant):
    """A signed-link token as the center makes it (docs/http-api.md)."""
    encoded = b64url(json.dumps(grant, separators=(",", ":")).encode())
    mac = hmac.new(DOWNLOAD_SECRET, b"export-center/download/v1." + encoded.encode(),
                   hashlib.sha256).digest()
    return encoded + "." + b64url(mac)


class ValidatesResponses(unittest.TestCase):
    """Real requests to cls.c (a started Cluster), each response validated
    against the document; load_document() fills cls.doc and cls.openapi."""

    @classmethod
    def load_document(cls):
        with open(DOC_PATH, "rb") as f:
            cls.doc_bytes = f.read()
        cls.doc = json.loads(cls.doc_bytes)
        cls.openapi = OpenAPI.from_dict(cls.doc)
        # Operations exercised so far: (method, path template) → statuses seen.
        cls.covered = {}

    # ---- validation -----------------------------------------------------------

    def template_of(self, path):
        """The document's path template matching `path` (concrete paths first)."""
        for template in sorted(self.doc["paths"], key=lambda t: t.count("{")):
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", re.escape(template).replace(
                r"\{", "{").replace(r"\}", "}")) + "$"
            if re.match(pattern, path):
                return template
        return None

    def call(self, method, path, token=None, body=None, headers=None, raw=None,
             expect=None, code=None):
        """One real request; its response is validated against the document.
        `expect` is the HTTP status, `code` the envelope code (both checked)."""
        r = request(method, self.c.base + path, token=token, body=body, headers=headers, raw=raw)
        if expect is not None:
            self.assertEqual(r.status, expect, f"{method} {path}: {r.body[:300]!r}")
        self.validate(method, path, r, body=body, raw=raw)
        if code is not None:
            self.assertEqual(r.json()["code"], code, r.body[:300])
        return r

    def validate(self, method, path, r, body=None, raw=None):
        template = self.template_of(urllib.parse.urlsplit(path).path)
        self.assertIsNotNone(template, f"{path} is not in the document")
        self.assertIn(method.lower(), self.doc["paths"][template],
                      f"{method} {template} is not in the document")
        url = urllib.parse.urlsplit(path)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = MockRequest(self.c.base, method.lower(), url.path,
                          args=dict(urllib.parse.parse_qsl(url.query)),
                          data=data, content_type="application/json")
        headers = {k: v for k, v in r.headers.items()}
        res = MockResponse(r.body, status_code=r.status, headers=headers,
                           content_type=r.headers.get("Content-Type", ""))
        try:
            self.openapi.validate_response(req, res)
        except Exception as e:  # the validator's errors carry the schema path in __cause__
            detail = getattr(e, "__cause__", None)
            inner = [str(x)[:300] for x in (getattr(detail, "schema_errors", None) or [detail])]
            self.fail(f"{method} {path} → {r.status} {r.headers.get('Content-Type')} does not "
                      f"match the document: {str(e)[:300]}: {inner}\nbody: {r.body[:300]!r}")
        self.covered.setdefault((method.lower(), template), set()).add(r.status)
        documented = self.doc["paths"][template][method.lower()]["responses"].get(str(r.status))
        if documented == {"$ref": "#/components/responses/HttpError"}:
            # What the schema cannot say: the envelope's code is the real status.
            self.assertEqual(r.json()["code"], str(r.status), f"{method} {path}: {r.body[:300]!r}")

    def validate_http_error(self, r, status):
        """HTTP-layer answers no operation describes (unknown route, wrong
        method): the document's ErrorEnvelope, with `code` equal to the status."""
        self.assertEqual(r.status, status)
        self.assertTrue(r.headers.get("Content-Type", "").startswith("application/json"))
        schemas = self.doc["components"]["schemas"]
        jsonschema.validate(r.json(), {**schemas["ErrorEnvelope"], "$defs": schemas})
        self.assertEqual(r.json()["code"], str(status))
        self.assertRegex(r.headers["X-Request-Id"], r"^[A-Za-z0-9._-]{1,64}$")


class OpenApiDocument(ValidatesResponses):
    @classmethod
    def setUpClass(cls):
        cls.load_document()
        # /metrics behind its bearer token, so both of its answers are seen.
        cls.c = Cluster(BUILD_DIR, seed=300,
                        overrides={"auth": {"metrics-bearer-token": METRICS_TOKEN}}).start()
        cls.alice = cls.c.token("alice", "1")
        cls.bob = cls.c.token("bob", "1")
        cls.demoted = cls.c.token("alice", "1", perms=())
        cls.auditor = cls.c.token("auditor", "1", perms=("platform:audit:read",))

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()
        print("operations covered:", file=sys.stderr)
        for (method, path), statuses in sorted(cls.covered.items()):
            print(f"  {method.upper():6} {path}: {sorted(statuses)}", file=sys.stderr)

    # ---- helpers over the API --------------------------------------------------

    def export(self, token, parameters=None, fmt=None):
        r = self.call("POST", API + "/export-tasks", token,
                      body={"exportType": "CUSTOMER_LIST", "parameters": parameters or {},
                            **({"format": fmt} if fmt else {})}, expect=200, code="200")
        return self.c.wait_task(token, r.json()["data"]["id"], states=("SUCCEEDED",))

    def set_status(self, task_id, status):
        self.c.db().execute("UPDATE export_task SET status = ? WHERE id = ?", (status, int(task_id)))

    # ---- the tests ------------------------------------------------------------

    def test_1_document_is_valid_openapi_3_1_and_served_as_is(self):
        validate_spec(self.doc)
        self.assertEqual(self.doc["openapi"], "3.1.0")
        r = self.call("GET", "/openapi.json", expect=200)
        self.assertEqual(r.body, self.doc_bytes)

    def test_2_operational_endpoints(self):
        self.assertEqual(self.call("GET", "/healthz", expect=200).json()["data"]["status"], "UP")
        self.assertEqual(self.call("GET", "/readyz", expect=200).json()["data"]["status"],
                         "READY")
        metrics = self.call("GET", "/metrics", headers={"Authorization": "Bearer " + METRICS_TOKEN},
                            expect=200)
        self.assertIn(b"# TYPE export_", metrics.body)
        self.call("GET", "/metrics", expect=401, code="401")
        self.assertIn(b"<html", self.call("GET", "/", expect=200).body.lower())
        self.call("GET", "/assets/app.js", expect=200)
        self.call("GET", "/assets/app.css", expect=200)
        self.call("GET", "/assets/nope.js", expect=404, code="404")

    def test_3_tasks_types_and_their_errors(self):
        base = API + "/export-tasks"
        types = self.call("GET", API + "/export-types", self.alice, expect=200, code="200")
        self.assertEqual(types.json()["data"][0]["exportType"], "CUSTOMER_LIST")
        self.call("GET", API + "/export-types", None, expect=200, code="401")

        task = self.export(self.alice, {"status": "ACTIVE"}, fmt="CSV")
        self.call("POST", base, self.alice, body={"exportType": "NOPE"}, expect=200, code="400")
        self.call("POST", base, self.alice, raw=b"{not json", expect=200, code="400")
        self.call("POST", base, self.demoted, body={"exportType": "CUSTOMER_LIST"}, expect=200,
                  code="403")
        self.call("POST", base, None, body={"exportType": "CUSTOMER_LIST"}, expect=200,
                  code="401")
        self.call("POST", base, self.alice, raw=b"{\"x\":\"" + b"a" * 70000 + b"\"}",
                  expect=413, code="413")

        listed = self.call("GET", base + "?size=5&page=1", self.alice, expect=200, code="200")
        self.assertEqual(listed.json()["data"]["records"][0]["id"], task["id"])
        self.call("GET", base + "?status=DONE", self.alice, expect=200, code="400")
        filtered = self.call("GET", base + "?status=SUCCEEDED,FAILED&name=" +
                             urllib.parse.quote("客户"), self.alice, expect=200, code="200")
        self.assertGreaterEqual(int(filtered.json()["data"]["total"]), 1)
        self.call("GET", base + "/" + task["id"], self.alice, expect=200, code="200")
        self.call("GET", base + "/0123", self.alice, expect=200, code="400")
        self.call("GET", base + "/" + task["id"], self.bob, expect=200, code="404")

        # Retry and cancel, with their wrong-state answers.
        self.call("POST", base + "/" + task["id"] + "/retry", self.alice, expect=200, code="409")
        self.call("POST", base + "/" + task["id"] + "/cancel", self.alice, expect=200,
                  code="409")
        failed = self.export(self.alice, {"status": "INACTIVE"})
        self.set_status(failed["id"], "FAILED")
        retried = self.call("POST", base + "/" + failed["id"] + "/retry", self.alice, expect=200,
                            code="200")
        self.assertEqual(retried.json()["data"]["dispatchVersion"], 2)
        cancelled = self.call("POST", base + "/" + failed["id"] + "/cancel", self.alice,
                              expect=200)
        self.assertIn(cancelled.json()["code"], ("200", "409"))  # it may have finished already

        # STALE: retry answers 409 pointing to export-again, which makes a new task.
        stale = self.export(self.alice, {"status": "ACTIVE"})
        self.set_status(stale["id"], "STALE")
        refused = self.call("POST", base + "/" + stale["id"] + "/retry", self.alice, expect=200,
                            code="409")
        self.assertIn("/export-again", refused.json()["message"])
        again = self.call("POST", base + "/" + stale["id"] + "/export-again", self.alice,
                          expect=200, code="200")
        self.assertNotEqual(again.json()["data"]["id"], stale["id"])
        self.call("POST", base + "/" + stale["id"] + "/export-again", self.bob, expect=200,
                  code="404")
        twice = self.call("POST", base + "/" + again.json()["data"]["id"] + "/export-again",
                          self.alice, expect=200)
        self.assertIn(twice.json()["code"], ("200", "409"))  # 409 while it still runs

        # The requester's language (docs/http-api.md#the-requesters-language).
        localized = self.call("POST", base, self.alice,
                              body={"exportType": "CUSTOMER_LIST", "locale": "zh-CN",
                                    "parameters": {"keyword": "openapi-locale"}},
                              expect=200, code="200").json()["data"]
        self.assertEqual(localized["locale"], "zh-CN")
        self.c.wait_task(self.alice, localized["id"], states=("SUCCEEDED",))
        self.call("POST", base, self.alice, body={"exportType": "CUSTOMER_LIST", "locale": "zh_CN"},
                  expect=200, code="400")

    def test_4_downloads_audit_and_their_real_statuses(self):
        base = API + "/export-tasks"
        task = self.export(self.alice)
        path = base + "/" + task["id"] + "/download"
        whole = self.call("GET", path, self.alice, expect=200)
        size = len(whole.body)
        self.call("GET", path, self.alice, headers={"Range": "bytes=0-9"}, expect=206)
        self.call("GET", path, self.alice, headers={"Range": f"bytes={size}-"}, expect=416)
        self.call("GET", path, None, expect=401)
        self.call("GET", path, self.demoted, expect=403)  # permission re-check
        self.call("GET", path, self.bob, expect=404)
        self.call("GET", base + "/abc/download", self.alice, expect=400)

        link = self.call("POST", base + "/" + task["id"] + "/download-url", self.alice,
                         expect=200, code="200").json()["data"]
        link_path = urllib.parse.urlsplit(link["url"]).path
        self.assertEqual(self.call("GET", link_path, expect=200).body, whole.body)
        self.call("GET", link_path, headers={"Range": "bytes=5-"}, expect=206)
        self.call("GET", API + "/downloads/forged.token", expect=403)
        grant = {"tid": task["id"], "ten": "1", "sub": "alice", "exp": 1000, "prm": PERM}
        self.call("GET", API + "/downloads/" + sign_link(grant), expect=410)
        grant.update(exp=int(time.time() * 1000) + 60000, ten="2")
        self.call("GET", API + "/downloads/" + sign_link(grant), expect=404)
        self.call("POST", base + "/" + task["id"] + "/download-url", self.demoted, expect=200,
                  code="403")

        # Wrong states: not finished (409), expired (410).
        other = self.export(self.alice, {"keyword": "a"})
        self.set_status(other["id"], "RUNNING")
        self.call("GET", base + "/" + other["id"] + "/download", self.alice, expect=409)
        self.call("POST", base + "/" + other["id"] + "/download-url", self.alice, expect=200,
                  code="409")
        self.set_status(other["id"], "EXPIRED")
        self.call("GET", base + "/" + other["id"] + "/download", self.alice, expect=410)

        # The audit: alice's whole file, ranges and her own link inside the window
        # are one download (docs/http-api.md#download-audit).
        audit = self.call("GET", API + "/download-audit?taskId=" + task["id"], self.auditor,
                          expect=200, code="200").json()["data"]
        self.assertEqual(audit["total"], "1")
        self.assertEqual({r["via"] for r in audit["records"]}, {"DIRECT"})
        self.assertEqual(self.call("GET", base + "/" + task["id"], self.alice,
                                   expect=200).json()["data"]["downloadCount"], "1")
        self.call("GET", API + "/download-audit", self.alice, expect=200, code="403")
        self.call("GET", API + "/download-audit?from=yesterday", self.auditor, expect=200,
                  code="400")

        # The timeline of the run that made the file, written by the real
        # publisher, consumer and download (docs/task-lifecycle.md#the-timeline).
        timeline = self.call("GET", base + "/" + task["id"] + "/timeline", self.alice,
                             expect=200, code="200").json()["data"]
        kinds = [e["kind"] for e in timeline["events"]]
        for kind in ("CREATED", "COMMAND_SENT", "CLAIMED", "FINISHED", "DOWNLOADED"):
            self.assertIn(kind, kinds)
        self.assertEqual(kinds[0], "CREATED")
        finished = next(e for e in timeline["events"] if e["kind"] == "FINISHED")
        self.assertEqual(finished["details"]["status"], "SUCCEEDED")
        self.assertEqual(finished["details"]["bytes"], size)
        self.call("GET", base + "/" + task["id"] + "/timeline", self.bob, expect=200, code="404")
        self.call("GET", base + "/0123/timeline", self.alice, expect=200, code="400")
        self.call("GET", base + "/" + task["id"] + "/timeline", None, expect=200, code="401")

    def test_5_http_layer_errors(self):
        self.validate_http_error(request("GET", self.c.base + "/no/such/route"), 404)
        # A percent-encoded line break in the path writes no line of its own
        # into the access log (found by api_fuzz_test.py): it is logged as \u000a.
        self.validate_http_error(request("GET", self.c.base + "/no/such%0A%5Bforged%5D"), 404)
        deadline = time.time() + 10
        while "/no/such\\u000a[forged]" not in self.c.log() and time.time() < deadline:
            time.sleep(0.1)
        self.assertIn("/no/such\\u000a[forged]", self.c.log())
        self.assertNotIn("\n[forged]", self.c.log())
        r = request("DELETE", self.c.base + API + "/export-tasks")
        self.validate_http_error(r, 405)
        self.assertIn("GET", r.headers["Allow"])
        with socket.create_connection(("127.0.0.1", self.c.center_port), timeout=10) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 +
                      b"\r\n\r\n")
            head = s.recv(65536).split(b"\r\n", 1)[0]
        self.assertIn(b" 431 ", head)

    def test_5b_a_task_event_matches_the_document(self):
        """One real event of the stream against the document's per-event
        schema (found by api_fuzz_test.py: the document said the stream was a
        string), its data against the Task schema."""
        conn = http.client.HTTPConnection("127.0.0.1", self.c.center_port, timeout=30)
        try:
            conn.request("GET", API + "/export-tasks/events",
                         headers={"Authorization": "Bearer " + self.alice,
                                  "Accept": "text/event-stream"})
            stream = conn.getresponse()
            self.assertEqual(stream.status, 200)
            self.export(self.alice, {"keyword": "event"})  # a change the stream reports
            event, fields = None, {}
            while event is None:
                line = stream.readline().decode("utf-8").rstrip("\r\n")
                if line == "":  # an event ends; the greeting (retry, comment) has no data
                    event, fields = (fields if "data" in fields else None), {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
        finally:
            conn.close()
        components = {"components": self.doc["components"]}
        content = self.doc["paths"][API + "/export-tasks/events"]["get"]["responses"]["200"][
            "content"]["text/event-stream"]
        jsonschema.validate(event, {**content["schema"], **components})
        jsonschema.validate(json.loads(event["data"]),
                            {"$ref": "#/components/schemas/Task", **components})

    def test_5c_the_operators_console(self):
        """Every route of the operators' console (docs/http-api.md#operators-console)
        with its main refusals."""
        op = self.c.token("op", "1", perms=("platform:export:operate",))
        base = API + "/operator"
        task = self.export(self.alice)
        self.set_status(task["id"], "FAILED")
        found = self.call("GET", base + "/tasks?status=FAILED&size=5", op, expect=200, code="200")
        self.assertEqual(found.json()["data"]["records"][0]["requestedBy"], "alice")
        self.call("GET", base + "/tasks?status=DONE", op, expect=200, code="400")
        self.call("GET", base + "/tasks", self.alice, expect=200, code="403")
        self.call("GET", base + "/tasks", None, expect=200, code="401")
        detail = self.call("GET", base + "/tasks/" + task["id"], op, expect=200, code="200")
        self.assertEqual(detail.json()["data"]["task"]["dispatchVersion"], 1)
        self.call("GET", base + "/tasks/1", op, expect=200, code="404")

        body = {"action": "RETRY", "filter": {"status": "FAILED", "user": "alice"}}
        counted = self.call("POST", base + "/bulk-actions/count", op, body=body, expect=200,
                            code="200").json()["data"]
        self.assertGreaterEqual(int(counted["matched"]), 1)
        self.call("POST", base + "/bulk-actions", op, body=body, expect=200, code="400")
        confirmed = {**body, "expectedFingerprint": counted["fingerprint"]}
        self.call("POST", base + "/bulk-actions", op, body={**confirmed, "expectedCount": "999"},
                  expect=200, code="409")
        done = self.call("POST", base + "/bulk-actions", op,
                         body={**confirmed, "expectedCount": counted["matched"]}, expect=200,
                         code="200").json()["data"]
        self.assertEqual(done["succeeded"], counted["matched"])
        self.c.wait_task(self.alice, task["id"], states=("SUCCEEDED",))
        self.call("POST", base + "/bulk-actions/count", self.alice, body=body, expect=200,
                  code="403")
        audit = self.call("GET", base + "/bulk-actions", op, expect=200, code="200")
        self.assertEqual(audit.json()["data"]["records"][0]["action"], "RETRY")
        stats = self.call("GET", base + "/stats", op, expect=200, code="200").json()["data"]
        self.assertEqual([w["window"] for w in stats["windows"]], ["24h", "7d"])
        self.call("GET", base + "/queue-health", op, expect=200, code="200")
        self.call("GET", base + "/queue-health?tenantId=2", op, expect=200, code="403")

        db = self.c.db()
        for note_id, status, version in ((9000000000000000002, "DEAD", 1),
                                         (9000000000000000003, "DELIVERED", 2)):
            db.execute("INSERT INTO export_notification (id, event_id, receiver_id, task_id,"
                       " dispatch_version, task_status, payload_json, status, attempt_count,"
                       " next_retry_at, last_error, created_at, updated_at) VALUES (?, ?, 'hooks',"
                       f" ?, ?, 'SUCCEEDED', '{{}}', ?, 8, {db.NOW}, 'HTTP 500', {db.NOW},"
                       f" {db.NOW})", (note_id, f"openapi-event-{note_id}", int(task["id"]),
                                       version, status))
        dead = self.call("GET", base + "/queue-health", op, expect=200, code="200").json()["data"]
        self.assertEqual(dead["deadDeliveries"][0]["id"], "9000000000000000002")
        self.call("POST", base + "/notifications/9000000000000000002/redeliver", op, expect=200,
                  code="200")
        self.call("POST", base + "/notifications/9000000000000000003/redeliver", op, expect=200,
                  code="409")
        self.call("POST", base + "/notifications/x/redeliver", op, expect=200, code="400")

        # The subscriptions' dead mails (docs/http-api.md#dead-mails).
        db.execute("INSERT INTO export_subscription (id, tenant_id, app_code, owner, export_type,"
                   " format, task_name, parameters_json, cron, time_zone, business_days_only,"
                   " delivery_json, state, consecutive_failures, version, created_at, updated_at)"
                   " VALUES (9000000000000000010, '1', 'PLATFORM', 'alice', 'CUSTOMER_LIST',"
                   " 'XLSX', 'weekly', '{}', '0 9 * * 1', 'Asia/Shanghai', 0,"
                   " '{\"emails\":[\"bob@example.com\"]}', 'PAUSED', 0, 1, 0, 0)")
        for mail_id, status in ((9000000000000000011, "DEAD"), (9000000000000000012, "DELIVERED")):
            db.execute("INSERT INTO export_mail (id, message_id, subscription_id, recipients,"
                       " subject, body_text, status, attempt_count, next_retry_at, last_error,"
                       f" created_at, updated_at) VALUES (?, ?, 9000000000000000010,"
                       f" 'bob@example.com', 'weekly', 'text', ?, 8, {db.NOW}, '550 no such user',"
                       f" {db.NOW}, {db.NOW})", (mail_id, f"<openapi-{mail_id}@x>", status))
        mails = self.call("GET", base + "/mails?status=DEAD", op, expect=200,
                          code="200").json()["data"]["items"]
        self.assertEqual([m["id"] for m in mails], ["9000000000000000011"])
        self.call("GET", base + "/mails?status=PENDING", op, expect=200, code="400")
        self.call("GET", base + "/mails", self.alice, expect=200, code="403")
        self.call("POST", base + "/mails/9000000000000000011/redeliver", op, expect=200,
                  code="200")
        self.call("POST", base + "/mails/9000000000000000012/redeliver", op, expect=200,
                  code="409")

        # The unsubscribe link of a subscription's mail: signed, no authentication.
        secret = self.c.config_dict()["auth"]["download-url-secret"].encode()
        mac = hmac.new(secret, b"export-center unsubscribe v1\n9000000000000000010\nbob@example.com",
                       hashlib.sha256).digest()
        sig = base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
        path = API + "/subscriptions/9000000000000000010/unsubscribe?r=bob%40example.com&sig="
        self.call("GET", path + sig[::-1], None, expect=403)
        self.call("GET", path + sig, None, expect=200)
        self.call("POST", path + sig[::-1], None, expect=403)
        self.call("POST", path + sig, None, expect=200)
        self.call("GET", API + "/subscriptions/x/unsubscribe?r=a&sig=b", None, expect=404)
        self.call("POST", API + "/subscriptions/x/unsubscribe?r=a&sig=b", None, expect=404)

    def test_5d_subscriptions(self):
        """Every subscription route (docs/http-api.md#subscriptions) and the
        console's, with the main refusals; run now is run by the scheduler."""
        subs = API + "/subscriptions"
        body = {"exportType": "CUSTOMER_LIST", "taskName": "Daily customers",
                "parameters": {}, "schedule": {"preset": "daily", "time": "09:00"},
                "delivery": {"skipIfEmpty": True}}
        made = self.call("POST", subs, self.alice, body=body, expect=201, code="200")
        sub = made.json()["data"]
        self.assertEqual(sub["schedule"]["cron"], "0 9 * * *")
        self.assertEqual(len(sub["nextRuns"]), 3)
        one = subs + "/" + sub["id"]
        self.call("POST", subs, self.alice, body={**body, "schedule": {"cron": "* * * * *"}},
                  expect=200, code="400")
        self.call("POST", subs, self.demoted, body=body, expect=200, code="403")
        self.call("GET", subs + "?limit=1", self.alice, expect=200, code="200")
        self.call("GET", one, self.alice, expect=200, code="200")
        self.call("GET", one, self.bob, expect=200, code="404")
        edited = self.call("PUT", one, self.alice, body={**body, "version": sub["version"]},
                           expect=200, code="200").json()["data"]
        self.call("PUT", one, self.alice, body={**body, "version": sub["version"]}, expect=200,
                  code="409")
        self.assertEqual(edited["version"], sub["version"] + 1)
        self.call("POST", one + "/pause", self.alice, expect=200, code="200")
        self.call("POST", one + "/run", self.alice, expect=200, code="409")
        self.call("POST", one + "/resume", self.alice, expect=200, code="200")
        run = self.call("POST", one + "/run", self.alice, expect=202, code="200").json()["data"]
        self.assertEqual(run["run"]["outcome"], "CLAIMED")
        deadline = time.time() + 30
        while True:
            runs = self.call("GET", one + "/runs", self.alice, expect=200,
                             code="200").json()["data"]["items"]
            if runs[0]["outcome"] == "CREATED" or time.time() > deadline:
                break
            time.sleep(0.3)
        self.assertEqual(runs[0]["outcome"], "CREATED", runs)
        self.c.wait_task(self.alice, runs[0]["taskId"], states=("SUCCEEDED",))

        op = self.c.token("op", "1", perms=("platform:export:operate",))
        console = API + "/operator/subscriptions"
        listed = self.call("GET", console + "?state=ACTIVE", op, expect=200, code="200")
        self.assertEqual(listed.json()["data"]["items"][0]["tenantId"], "1")
        self.call("GET", console, self.alice, expect=200, code="403")
        self.call("POST", console + "/" + sub["id"] + "/pause", op, expect=200, code="200")
        self.call("POST", console + "/" + sub["id"] + "/resume", op, expect=200, code="200")
        self.call("DELETE", one, self.bob, expect=200, code="404")
        self.call("DELETE", one, self.alice, expect=204)

    def test_6_task_events_preview_and_coverage(self):
        """Task events (a stream that never ends: its head is read and checked)
        and the preview; then every documented operation must have been
        exercised and validated by this file."""
        with socket.create_connection(("127.0.0.1", self.c.center_port), timeout=10) as s:
            s.sendall(f"GET {API}/export-tasks/events HTTP/1.1\r\nHost: x\r\n"
                      f"Authorization: Bearer {self.alice}\r\nAccept: text/event-stream\r\n"
                      "Connection: close\r\n\r\n".encode())
            s.settimeout(5)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
        status_line, _, rest = head.partition(b"\r\n")
        hdrs = {k.strip().lower(): v.strip() for k, _, v in
                (line.decode().partition(":") for line in rest.split(b"\r\n\r\n")[0].split(b"\r\n"))}
        self.assertIn(b" 200 ", status_line, head[:300])
        self.assertTrue(hdrs.get("content-type", "").startswith("text/event-stream"), hdrs)
        self.assertRegex(hdrs.get("x-request-id", ""), r"^[A-Za-z0-9._-]{1,64}$")
        self.covered[("get", API + "/export-tasks/events")] = {200}
        # Its ticket (docs/http-api.md): issued with the token, opens the stream once.
        ticket = self.call("POST", API + "/export-tasks/events-ticket", self.alice, expect=200,
                           code="200").json()["data"]
        self.assertEqual(ticket["eventsPath"], API + "/export-tasks/events")
        self.call("POST", API + "/export-tasks/events-ticket", None, expect=200, code="401")
        query = "?ticket=" + urllib.parse.quote(ticket["ticket"], safe="")
        with socket.create_connection(("127.0.0.1", self.c.center_port), timeout=10) as s:
            s.sendall(f"GET {API}/export-tasks/events{query} HTTP/1.1\r\nHost: x\r\n"
                      "Accept: text/event-stream\r\nConnection: close\r\n\r\n".encode())
            s.settimeout(5)
            self.assertIn(b" 200 ", s.recv(4096).split(b"\r\n", 1)[0])
        spent = self.call("GET", API + "/export-tasks/events" + query)
        self.assertEqual(spent.status, 401)
        self.assertEqual(spent.json()["code"], "401")

        preview_body = {"exportType": "CUSTOMER_LIST", "parameters": {"status": "ACTIVE"}}
        preview = self.call("POST", API + "/export-previews", self.alice, body=preview_body,
                            expect=200, code="200")
        self.assertTrue(preview.json()["data"]["rows"])
        # The language and the header grouping (docs/http-api.md#the-requesters-language).
        localized = self.call("POST", API + "/export-previews", self.alice,
                              body={**preview_body, "locale": "en"}, expect=200,
                              code="200").json()["data"]
        self.assertEqual(localized["locale"], "en")
        self.assertEqual(localized["headerRows"], 1)
        self.assertEqual([c["titlePath"] for c in localized["columns"]],
                         [[c["title"]] for c in localized["columns"]])
        self.call("POST", API + "/export-previews", self.alice,
                  body={**preview_body, "locale": "en_US"}, expect=200, code="400")
        self.call("POST", API + "/export-previews", None, body=preview_body, expect=200,
                  code="401")
        self.call("POST", API + "/export-previews", self.alice, body={"exportType": "NOPE"},
                  expect=200, code="400")

        documented = {(m, p) for p, ops in self.doc["paths"].items() for m in ops}
        self.assertEqual(documented - set(self.covered), set(),
                         "documented operations no request exercised")


class NotReady(ValidatesResponses):
    """/readyz's documented 503, for real: the center's task store is a
    throwaway PostgreSQL server (scripts/test-postgres.sh), stopped by its pid
    while the center runs."""

    @classmethod
    def setUpClass(cls):
        cls.load_document()
        cls.pg = ScriptServer("test-postgres.sh", prefix="ec-openapi-pg-")
        cls.c = None
        try:
            url = cls.pg.start()
            cls.c = Cluster(BUILD_DIR, seed=50, prefix="ec-openapi-notready-",
                            overrides={"database": {"kind": "postgres", "postgres-url": url}})
            cls.c.start()
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.c is not None:
            cls.c.cleanup()
        cls.pg.stop()  # a no-op when the test stopped it already

    def test_readyz_answers_503_while_the_task_store_is_stopped(self):
        self.assertEqual(self.call("GET", "/readyz", expect=200).json()["data"]["status"],
                         "READY")
        self.pg.stop()
        # HttpError: a real HTTP status, and the envelope's code equals it.
        r = self.call("GET", "/readyz", expect=503, code="503")
        self.assertNotIn("127.0.0.1", r.json()["message"])  # no database detail to a caller
        # The process itself is up: only readiness (where traffic goes) changes.
        self.assertEqual(self.call("GET", "/healthz", expect=200).json()["data"]["status"], "UP")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
