"""Password-protected files end to end
(docs/configuration.md#password-protected-files-file-password): the built export-center and
customer-service binaries, the type taking a `filePassword`.

- An XLSX export with a password is decrypted by msoffcrypto-tool (an independent reader,
  pinned by scripts/install-file-decrypters.sh) with that password and read by openpyxl:
  every cell equals the plain export of the same parameters; the wrong password fails.
  A CSV export with a password is an AES zip pyzipper opens with it; its CSV equals the
  plain CSV export.
- The task JSON, its manifest and the webhook say `encrypted: true`; the wrapped file key is
  erased from the task row once the task ended.
- An attempt killed with the center (kill -9) is recovered by lease and retried: the file of
  the retry opens with the same password.
- No log line (center and sample service), no row of export_task, export_outbox,
  export_task_event, export_notification or export_download_audit, no timeline event read
  through the API, no webhook body and no API answer holds the password or one of its
  obvious encodings (base64, hex, URL and JSON escapes, UTF-16, its SHA-256 and MD5).

Run: /usr/bin/python3 file_password_test.py BUILD_DIR [-k NAME]
"""
import base64
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.parse

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
from harness import REPO, Cluster, deep_merge  # noqa: E402
from notifications_test import Receiver, notifications  # noqa: E402

sys.path.insert(0, subprocess.check_output(
    [os.path.join(REPO, "scripts", "install-file-decrypters.sh")], text=True).strip())
import msoffcrypto  # noqa: E402
import pyzipper  # noqa: E402

BUILD_DIR = None
# Non-ASCII on purpose: its JSON and URL escapes differ from its bytes.
PASSWORD = "Sécret-密码-2026!"
WRONG = "Sécret-密码-2027!"
KEK = "e2e-file-key-encryption-key-0123456789abcdef"
PARAMS = {"keyword": "科技"}

FAST = {
    "consumer": {"lease-seconds": 10, "heartbeat-seconds": 1, "max-duration-seconds": 120,
                 "retry-backoff-seconds": [1, 2], "shutdown-grace-seconds": 2},
    "publisher": {"poll-interval-ms": 200, "backoff-seconds": [1]},
    "reconciler": {"interval-seconds": 1, "redispatch-grace-seconds": 1,
                   "sent-stale-seconds": 30},
    "provider": {"read-timeout-ms": 30000},
    "auth": {"file-key-encryption-key": KEK},
    "definitions": {"CUSTOMER_LIST": {"file-password": "optional"}},
}


def encodings(secret):
    """The password and the forms a careless line or row would hold it in."""
    raw = secret.encode("utf-8")
    forms = {
        raw,
        base64.b64encode(raw), base64.b64encode(raw).rstrip(b"="),
        base64.urlsafe_b64encode(raw), base64.urlsafe_b64encode(raw).rstrip(b"="),
        raw.hex().encode(), raw.hex().upper().encode(),
        urllib.parse.quote(secret).encode(), urllib.parse.quote_plus(secret).encode(),
        urllib.parse.quote(secret, safe="").encode(),
        json.dumps(secret)[1:-1].encode(), json.dumps(secret, ensure_ascii=False)[1:-1].encode(),
        secret.encode("utf-16-le"), secret.encode("utf-16-be"),
        hashlib.sha256(raw).hexdigest().encode(), hashlib.md5(raw).hexdigest().encode(),
    }
    # The ASCII run of it alone (what a log that drops other bytes would keep).
    forms.add(b"2026!")
    return forms


def decrypt_xlsx(data, password):
    office = msoffcrypto.OfficeFile(io.BytesIO(data))
    assert office.is_encrypted(), "not an encrypted Office file"
    office.load_key(password=password, verify_password=True)
    out = io.BytesIO()
    office.decrypt(out, verify_integrity=True)
    return out.getvalue()


def cells(xlsx_bytes):
    wb = openpyxl.load_workbook(io.BytesIO(xlsx_bytes), read_only=True)
    return [[list(r) for r in ws.iter_rows(values_only=True)] for ws in wb.worksheets]


class FilePasswordTest(unittest.TestCase):
    def setUp(self):
        self.receiver = Receiver()
        self.addCleanup(self.receiver.stop)
        self.c = Cluster(BUILD_DIR, seed=800, prefix="ec-filepw-", snapshot_binaries=True,
                         overrides=deep_merge(FAST, notifications(self.receiver.port)))
        self.addCleanup(self.c.cleanup)
        self.c.start()
        self.token = self.c.token("alice", "1")
        self.answers = []  # every API answer body, for the grep

    def api(self, method, path, body=None):
        r = self.c.api(method, path, self.token, body)
        self.answers.append(r.body)
        return r

    def create(self, fmt, password=None, params=PARAMS):
        body = {"exportType": "CUSTOMER_LIST", "format": fmt, "parameters": params}
        if password is not None:
            body["filePassword"] = password
        r = self.api("POST", "/export-tasks", body).json()
        self.assertEqual(r["code"], "200", r)
        return r["data"]

    def finish(self, task_id, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = self.api("GET", f"/export-tasks/{task_id}").json()
            if r["data"]["status"] not in ("PENDING", "RUNNING"):
                return r["data"]
            time.sleep(0.2)
        raise AssertionError(f"task {task_id} did not end")

    def download(self, task_id):
        r = self.c.api("GET", f"/export-tasks/{task_id}/download", self.token)
        self.assertEqual(r.status, 200, r.body[:300])
        return r.body

    def export(self, fmt, password=None):
        task = self.finish(self.create(fmt, password)["id"])
        self.assertEqual(task["status"], "SUCCEEDED", task)
        return task, self.download(task["id"])

    def assert_erased(self, task_id):
        row = self.c.task_row(task_id)
        self.assertEqual(row["file_encrypted"], 1, row)
        self.assertIsNone(row["file_key_wrapped"], "the wrapped key outlived the task")
        self.assertIsNone(row["file_key_id"])

    def test_files_open_with_the_password_and_nothing_holds_it(self):
        # A bad password first: 400 naming the rule, its value nowhere.
        r = self.api("POST", "/export-tasks", {"exportType": "CUSTOMER_LIST",
                                               "filePassword": "Ab1-bad"}).json()
        self.assertEqual(r["code"], "400", r)
        self.assertIn("too short", r["message"])

        _, plain_xlsx = self.export("XLSX")
        task, locked = self.export("XLSX", PASSWORD)
        self.assertTrue(task["encrypted"], task)
        self.assertTrue(task["manifest"]["encrypted"], task)
        self.assertEqual(locked[:8], bytes.fromhex("d0cf11e0a1b11ae1"), "an OLE compound file")
        self.assertEqual(cells(decrypt_xlsx(locked, PASSWORD)), cells(plain_xlsx))
        self.assertGreater(len(cells(plain_xlsx)[0]), 1, "the parameters select some rows")
        with self.assertRaises(Exception):
            decrypt_xlsx(locked, WRONG)
        self.assert_erased(task["id"])

        _, plain_csv = self.export("CSV")
        csv_task, zipped = self.export("CSV", PASSWORD)
        self.assertTrue(csv_task["encrypted"])
        with pyzipper.AESZipFile(io.BytesIO(zipped)) as z:
            z.setpassword(PASSWORD.encode("utf-8"))
            names = z.namelist()
            self.assertEqual(len(names), 1, names)
            self.assertTrue(names[0].endswith(".csv"), names)
            info = z.getinfo(names[0])
            self.assertTrue(info.flag_bits & 0x1, "an encrypted entry")
            self.assertEqual((getattr(info, "wz_aes_strength", None),
                              getattr(info, "wz_aes_version", None)), (3, 2), "WinZip AES-256, AE-2")
            inner = z.read(names[0])
        self.assertEqual(list(csv.reader(io.StringIO(inner.decode("utf-8-sig")))),
                         list(csv.reader(io.StringIO(plain_csv.decode("utf-8-sig")))))
        with pyzipper.AESZipFile(io.BytesIO(zipped)) as z:
            z.setpassword(WRONG.encode("utf-8"))
            with self.assertRaises(Exception):
                z.read(names[0])
        self.assert_erased(csv_task["id"])

        # The webhook says so; its body is grepped below with everything else.
        calls = self.receiver.wait(
            lambda cs: any(json.loads(c["body"])["task"]["taskId"] == task["id"] for c in cs),
            30, "the ended event of the encrypted task")
        event = next(json.loads(c["body"]) for c in calls
                     if json.loads(c["body"])["task"]["taskId"] == task["id"])
        self.assertTrue(event["task"]["encrypted"], event)
        # Exporting it again needs a new password; a retry is refused.
        self.assertEqual(self.api("POST", f"/export-tasks/{task['id']}/export-again")
                         .json()["code"], "400")
        for tid in (task["id"], csv_task["id"]):
            self.api("GET", f"/export-tasks/{tid}/timeline")
        self.api("GET", "/export-tasks?page=1&size=100")
        self.assert_password_nowhere()

    def test_a_killed_attempt_is_retried_into_a_file_the_same_password_opens(self):
        # The first batch hangs 20 s: the attempt is mid-export when the center dies.
        self.c.faults(hangMs=20000, hangCount=1)
        task_id = self.create("XLSX", PASSWORD)["id"]
        self.c.wait_row(task_id, lambda r: r["status"] == "RUNNING", what="RUNNING")
        deadline = time.time() + 10
        while self.c.provider_stats()["batchCalls"] < 1 and time.time() < deadline:
            time.sleep(0.05)
        running = self.c.task_row(task_id)
        self.assertIsNotNone(running["file_key_wrapped"], "the key is there for the retry")
        self.c.kill_center()
        self.c.start_center()
        task = self.finish(task_id, timeout=90)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        self.assertEqual(task["dispatchVersion"], 2, "recovered by lease, version+1")
        locked = self.download(task_id)
        book = cells(decrypt_xlsx(locked, PASSWORD))
        self.assertGreater(len(book[0]), 1)
        with self.assertRaises(Exception):
            decrypt_xlsx(locked, WRONG)
        self.assert_erased(task_id)
        self.assert_password_nowhere()

    # ---- the grep ----------------------------------------------------------------

    def assert_password_nowhere(self):
        places = {}
        for name in sorted(os.listdir(self.c.dir)):
            if name.endswith(".log"):
                with open(os.path.join(self.c.dir, name), "rb") as f:
                    places["log " + name] = f.read()
        db = self.c.db()
        for table in ("export_task", "export_outbox", "export_task_event", "export_notification",
                      "export_download_audit", "export_bulk_action"):
            places["table " + table] = repr(db.query(f"SELECT * FROM {table}")).encode() + \
                json.dumps(db.query(f"SELECT * FROM {table}"), default=str,
                           ensure_ascii=False).encode("utf-8")
        places["webhook bodies"] = b"\n".join(c["body"] for c in self.receiver.snapshot())
        places["API answers"] = b"\n".join(self.answers)
        self.assertTrue(places["log center.log"], "the center logged nothing?")
        self.assertGreater(sum(1 for _ in db.query("SELECT id FROM export_task_event")), 0)
        for where, data in places.items():
            for form in encodings(PASSWORD):
                self.assertNotIn(form, data, f"{where} holds the password as {form!r}")
            self.assertNotIn(KEK.encode(), data, f"{where} holds the key-encryption key")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
