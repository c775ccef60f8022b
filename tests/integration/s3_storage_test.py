"""storage.kind: s3 end to end: the built center against a real S3-compatible
server (S3Proxy, scripts/test-s3.sh). XLSX, CSV (several multipart parts),
template and split exports are uploaded, downloaded through the API and read
back cell by cell; `export-center storage list` shows them; the size cap
aborts the multipart upload and leaves nothing; presigned download mode
answers 302 to a URL a plain client can fetch, on the presign endpoint and
signed for its host when one is set; a kill -9 in the middle of an
upload leaves no object and no incomplete upload once the sweep has run.

Run: /usr/bin/python3 s3_storage_test.py BUILD_DIR
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import zipfile

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from manifest_check import assert_manifest  # noqa: E402
from harness import Cluster  # noqa: E402

BUILD_DIR = None
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIB = 1024 * 1024
SEED = 100000  # tenant 1: 60 000 customers, a 7.4 MB CSV = two 5 MiB parts
TEMPLATE_COLUMNS = ["id", "customerCode", "customerName", "status", "balance", "creditLimit",
                    "vip", "registeredOn", "lastOrderAt", "remarks"]


class S3Server:
    """scripts/test-s3.sh start|stop, stopped by its own pid."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ec-s3-it-")
        out = subprocess.run([os.path.join(ROOT, "scripts", "test-s3.sh"), "start", self.dir],
                             check=True, capture_output=True, text=True, timeout=120).stdout
        self.env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def new_bucket(self, name):
        """Another bucket: S3Proxy's file-system backend keeps one as a folder."""
        os.makedirs(os.path.join(self.dir, "data", name))
        return name

    def storage_config(self, bucket, **extra):
        s3 = {"endpoint": self.env["EXPORT_CENTER_S3_ENDPOINT"],
              "bucket": bucket,
              "region": self.env["EXPORT_CENTER_S3_REGION"],
              "access-key": self.env["EXPORT_CENTER_S3_ACCESS_KEY"],
              "secret-key": self.env["EXPORT_CENTER_S3_SECRET_KEY"],
              "path-style": True, "part-size-bytes": 5 * MIB}
        s3.update(extra)
        return {"kind": "s3", "root": None, "s3": s3}

    def as_localhost(self, url):
        """`url` on 127.0.0.1:P rewritten to localhost:P: the same server, another Host."""
        endpoint = self.env["EXPORT_CENTER_S3_ENDPOINT"]
        assert endpoint.startswith("http://127.0.0.1:"), endpoint
        return url.replace("http://127.0.0.1:", "http://localhost:", 1)

    def object_bytes(self, bucket, key):
        """An object's bytes as the store keeps them (S3Proxy's file-system backend)."""
        with open(os.path.join(self.dir, "data", bucket, key), "rb") as f:
            return f.read()

    def stop(self):
        subprocess.run([os.path.join(ROOT, "scripts", "test-s3.sh"), "stop", self.dir],
                       check=False, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def make_template(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "客户"
    ws["A1"] = "{taskName}"
    ws["A2"] = "状态: {status}"
    formats = {"registeredOn": "yyyy-mm-dd", "lastOrderAt": "yyyy-mm-dd hh:mm:ss"}
    for i, key in enumerate(TEMPLATE_COLUMNS):
        ws.cell(row=3, column=i + 1, value=customer_data.TITLES[i])
        cell = ws.cell(row=4, column=i + 1, value="{." + key + "}")
        if key in formats:  # a template's cells bring their own formats
            cell.number_format = formats[key]
    wb.save(path)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get_no_redirect(url, token=None, method="GET", headers=None):
    """(status, headers, body) without following a redirect."""
    opener = urllib.request.build_opener(NoRedirect)
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, headers=sent, method=method)
    try:
        with opener.open(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


class S3Exports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s3 = S3Server()
        cls.clusters = []

    @classmethod
    def tearDownClass(cls):
        for c in cls.clusters:
            c.cleanup()
        cls.s3.stop()

    def cluster(self, storage_extra=None, overrides=None):
        # A bucket per cluster: each test sees only its own objects.
        bucket = self.s3.new_bucket(f"test-{len(self.clusters)}-{os.getpid()}")
        over = {"storage": self.s3.storage_config(bucket, **(storage_extra or {}))}
        over.update(overrides or {})
        c = Cluster(BUILD_DIR, seed=SEED, overrides=over, prefix="ec-s3-it-")
        self.clusters.append(c)  # cleaned up even when a process fails to start
        return c.start()

    @staticmethod
    def restart_with_writer(c, **definition):
        """The sample service serves CUSTOMER_LIST only: the center restarts with
        that definition's file options changed (template-file, split)."""
        over = dict(c.overrides)
        over["definitions"] = {"CUSTOMER_LIST": definition}
        c.stop_center()
        c.write_config(over)
        c.start_center()

    def storage_list(self, c):
        out = subprocess.run([os.path.join(c.build_dir, "export-center"), "storage", "list",
                              "--config", c.config], check=True, capture_output=True, text=True,
                             timeout=60).stdout
        return [line.split("\t") for line in out.splitlines()]

    def export(self, c, token, fmt=None, parameters=None):
        created = c.create(token, parameters=parameters or {}, fmt=fmt)
        self.assertEqual(created["code"], "200", created)
        task = c.wait_task(token, created["data"]["id"], timeout=300)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        r = c.api("GET", f"/export-tasks/{task['id']}/download", token)
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(len(r.body), int(task["sizeBytes"]))
        # The digest was taken on the way into the multipart upload; S3's bytes must match it.
        assert_manifest(self, task, r.body, r.headers)
        return task, r.body

    def assert_rows(self, got_rows, expected):
        self.assertEqual(len(got_rows), len(expected))
        for got, want in zip(got_rows, expected):
            for g, w in zip(got, want):
                self.assertTrue(customer_data.same_cell(g, w), (got, want))

    def test_every_writer_uploads_and_reads_back_cell_by_cell(self):
        c = self.cluster()
        token = c.token("u1", "1")
        db = os.path.join(c.dir, "customers.db")
        keys = {}

        # XLSX, one PUT (under a part).
        params = {"keyword": "科技"}
        task, body = self.export(c, token, parameters=params)
        keys[task["id"]] = int(task["sizeBytes"])
        ws = openpyxl.load_workbook(io.BytesIO(body)).worksheets[0]
        rows = list(ws.iter_rows(values_only=True))
        self.assertEqual(list(rows[0]), customer_data.TITLES)
        self.assert_rows(rows[1:], customer_data.expected_rows(db, "1", params))

        # CSV of the whole tenant: two multipart parts.
        task, body = self.export(c, token, fmt="CSV")
        keys[task["id"]] = int(task["sizeBytes"])
        self.assertGreater(len(body), 5 * MIB)
        got = list(csv.reader(io.StringIO(body.decode("utf-8-sig"), newline="")))
        want = customer_data.expected_rows(db, "1", {})
        self.assertEqual(got[0], customer_data.TITLES)
        self.assertEqual(len(got) - 1, len(want))
        for g, w in zip(got[1:], want):
            self.assertEqual([int(g[0]), g[1], g[2], g[3]], w[:4])
        part = c.api("GET", f"/export-tasks/{task['id']}/download", token,
                     headers={"Range": f"bytes={5 * MIB - 10}-{5 * MIB + 9}"})
        self.assertEqual(part.status, 206)
        self.assertEqual(part.body, body[5 * MIB - 10:5 * MIB + 10])

        # Template fill.
        template = os.path.join(c.dir, "customer_template.xlsx")
        make_template(template)
        self.restart_with_writer(c, **{"template-file": template})
        params = {"status": "FROZEN"}
        task, body = self.export(c, token, parameters=params)
        keys[task["id"]] = int(task["sizeBytes"])
        ws = openpyxl.load_workbook(io.BytesIO(body)).worksheets[0]
        want = customer_data.expected_rows(db, "1", params)
        self.assertEqual(ws["A1"].value, "客户列表")
        self.assertEqual(ws["A2"].value, "状态: FROZEN")
        self.assertEqual([cell.value for cell in ws[3]], customer_data.TITLES)
        self.assert_rows(list(ws.iter_rows(min_row=4, values_only=True)), want)

        # Split into a zip of workbooks.
        self.restart_with_writer(c, split="files", **{"rows-per-file": 1000})
        params = {"keyword": "物流"}
        task, body = self.export(c, token, parameters=params)
        keys[task["id"]] = int(task["sizeBytes"])
        want = customer_data.expected_rows(db, "1", params)
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            manifest = json.loads(z.read("manifest.json"))
            self.assertEqual(manifest["rows"], len(want))
            rows = []
            for f in manifest["files"]:
                ws = openpyxl.load_workbook(io.BytesIO(z.read(f["name"]))).worksheets[0]
                part_rows = list(ws.iter_rows(values_only=True))
                self.assertEqual(list(part_rows[0]), customer_data.TITLES)
                self.assertEqual(len(part_rows) - 1, f["rows"])
                rows += part_rows[1:]
        self.assertGreater(len(manifest["files"]), 1)
        self.assert_rows(rows, want)
        assert_manifest(self, task, body, parts=[f["rows"] for f in manifest["files"]])
        self.assertEqual({p["kind"] for p in task["manifest"]["parts"]}, {"FILE"})

        # `storage list`: one complete object per task, with its size; nothing partial.
        listed = self.storage_list(c)
        self.assertEqual(len(listed), len(keys), listed)
        for task_id, size in keys.items():
            key = c.task_row(task_id)["object_key"]
            self.assertIn([key, str(size), "complete"], listed)

    def test_size_cap_aborts_the_multipart_upload_and_leaves_nothing(self):
        cap = 6 * MIB  # past the first 5 MiB part: the multipart upload has begun
        c = self.cluster(overrides={"limits": {"max-file-bytes": cap}})
        token = c.token("u1", "1")
        created = c.create(token, parameters={}, fmt="CSV")
        task = c.wait_task(token, created["data"]["id"], timeout=300)
        self.assertEqual(task["status"], "FAILED", task)
        self.assertEqual(task["failureCode"], "LIMIT_EXCEEDED", task)
        # The user sees the classified text (no object key); the log keeps the figure.
        self.assertNotIn("exports/", task["failureMessage"])
        log = c.log()
        self.assertRegex(log, rf"task {task['id']} v\d+: attempt failed failure_code=LIMIT_EXCEEDED.*{cap}")
        self.assertRegex(log, rf"multipart upload of exports/\S+/{task['id']}/\S+\.csv aborted")
        self.assertEqual(self.storage_list(c), [])

    def test_presigned_download_mode(self):
        c = self.cluster(storage_extra={"download": "presigned", "presign-ttl-seconds": 3})
        token = c.token("u1", "1")
        params = {"keyword": "柏悦"}
        created = c.create(token, parameters=params, name="客户导出")
        task = c.wait_task(token, created["data"]["id"])
        self.assertEqual(task["status"], "SUCCEEDED", task)
        status, headers, _ = get_no_redirect(
            f"{c.base}/api/platform/v1/files/export-tasks/{task['id']}/download", token)
        self.assertEqual(status, 302)
        location = headers["Location"]
        self.assertTrue(location.startswith(self.s3.env["EXPORT_CENTER_S3_ENDPOINT"] + "/"),
                        location)
        self.assertIn("X-Amz-Signature=", location)
        # Signed for 127.0.0.1:P: the same server reached as localhost:P refuses
        # it, so a URL's host cannot be rewritten afterwards (presign-endpoint).
        status, _, body = get_no_redirect(self.s3.as_localhost(location))
        self.assertEqual(status, 403, body[:300])
        self.assertIn(b"SignatureDoesNotMatch", body)
        # A plain client, no token: the URL is the credential.
        status, headers, body = get_no_redirect(location)
        self.assertEqual(status, 200)
        self.assertIn("客户导出", urllib.parse.unquote(headers["Content-Disposition"]))
        ws = openpyxl.load_workbook(io.BytesIO(body)).worksheets[0]
        self.assert_rows(list(ws.iter_rows(min_row=2, values_only=True)),
                         customer_data.expected_rows(os.path.join(c.dir, "customers.db"), "1",
                                                     params))
        # The store serves the bytes: no Repr-Digest on the redirect, the manifest checks them.
        assert_manifest(self, task, body, parts=[ws.max_row - 1])
        self.assertEqual(int(c.task_row(task["id"])["download_count"]), 1)
        # The signed link of the download center redirects the same way.
        link = c.api("POST", f"/export-tasks/{task['id']}/download-url", token).json()
        self.assertEqual(link["code"], "200", link)
        status, headers, _ = get_no_redirect(link["data"]["url"])
        self.assertEqual(status, 302)
        # Another user is refused before any URL is made.
        other = c.token("u2", "1")
        status, _, _ = get_no_redirect(
            f"{c.base}/api/platform/v1/files/export-tasks/{task['id']}/download", other)
        self.assertEqual(status, 404)
        time.sleep(4)
        status, _, _ = get_no_redirect(location)
        self.assertEqual(status, 403, "the presigned URL expired")

    def audit_rows(self, c, task_id):
        return c.db().query("SELECT user_id, served_by FROM export_download_audit"
                            " WHERE task_id = ?", (int(task_id),))

    # Every answer that hands out the file's bytes or a URL
    # to them is audited, once per task, user and window
    # (docs/http-api.md#download-audit) — with the real S3 store behind.
    def test_every_answer_handing_out_the_file_is_audited_once(self):
        for mode in ("stream", "presigned"):
            with self.subTest(mode=mode):
                c = self.cluster(storage_extra={"download": mode})
                token = c.token("u1", "1")
                url = lambda t: f"{c.base}/api/platform/v1/files/export-tasks/{t['id']}/download"
                ok = 302 if mode == "presigned" else 206

                def exported():
                    created = c.create(token, parameters={"keyword": "柏悦"})
                    t = c.wait_task(token, created["data"]["id"])
                    self.assertEqual(t["status"], "SUCCEEDED", t)
                    return t

                # All but the first byte.
                t = exported()
                status, _, body = get_no_redirect(url(t), token, headers={"Range": "bytes=1-"})
                self.assertEqual(status, ok)
                if mode == "stream":
                    self.assertEqual(len(body), int(t["sizeBytes"]) - 1)
                self.assertEqual(int(c.task_row(t["id"])["download_count"]), 1)
                self.assertEqual(len(self.audit_rows(c, t["id"])), 1)
                # A middle range, then HEAD and the whole file: still one download.
                t = exported()
                status, _, _ = get_no_redirect(url(t), token, headers={"Range": "bytes=100-199"})
                self.assertEqual(status, ok)
                status, _, _ = get_no_redirect(url(t), token, method="HEAD")
                self.assertEqual(status, 302 if mode == "presigned" else 200)
                status, _, _ = get_no_redirect(url(t), token)
                self.assertEqual(status, 302 if mode == "presigned" else 200)
                self.assertEqual(int(c.task_row(t["id"])["download_count"]), 1)
                rows = self.audit_rows(c, t["id"])
                self.assertEqual(len(rows), 1, rows)
                self.assertEqual(rows[0]["served_by"],
                                 "PRESIGNED_REDIRECT" if mode == "presigned" else "STREAM")
                # HEAD alone: a 302 hands out a URL (audited); a streamed HEAD
                # only headers (not audited).
                t = exported()
                status, headers, _ = get_no_redirect(url(t), token, method="HEAD")
                if mode == "presigned":
                    self.assertEqual(status, 302)
                    self.assertIn("X-Amz-Signature=", headers["Location"])
                    self.assertEqual(int(c.task_row(t["id"])["download_count"]), 1)
                    self.assertEqual(len(self.audit_rows(c, t["id"])), 1)
                else:
                    self.assertEqual(status, 200)
                    self.assertEqual(int(c.task_row(t["id"])["download_count"]), 0)
                    self.assertEqual(len(self.audit_rows(c, t["id"])), 0)

    def test_presigned_urls_point_at_the_presign_endpoint_signed_for_its_host(self):
        # The center reaches the store at 127.0.0.1:P; browsers "know" it as
        # localhost:P (an internal address and a public name of one store).
        endpoint = self.s3.env["EXPORT_CENTER_S3_ENDPOINT"]
        public = self.s3.as_localhost(endpoint)
        self.assertNotEqual(public, endpoint)
        c = self.cluster(storage_extra={"download": "presigned", "presign-endpoint": public})
        token = c.token("u1", "1")
        created = c.create(token, parameters={"keyword": "科技"}, fmt="CSV")
        task = c.wait_task(token, created["data"]["id"])
        self.assertEqual(task["status"], "SUCCEEDED", task)
        status, headers, _ = get_no_redirect(
            f"{c.base}/api/platform/v1/files/export-tasks/{task['id']}/download", token)
        self.assertEqual(status, 302)
        location = headers["Location"]
        self.assertTrue(location.startswith(public + "/"), location)
        status, _, body = get_no_redirect(location)
        self.assertEqual(status, 200, body[:300])
        row = c.task_row(task["id"])
        stored = self.s3.object_bytes(c.overrides["storage"]["s3"]["bucket"], row["object_key"])
        self.assertEqual(len(body), int(task["sizeBytes"]))
        self.assertEqual(body, stored)
        self.assertIn("科技".encode("utf-8"), body)
        # Signed for localhost:P: refused when sent to the same server as 127.0.0.1:P.
        status, _, body = get_no_redirect(endpoint + location[len(public):])
        self.assertEqual(status, 403, body[:300])
        self.assertIn(b"SignatureDoesNotMatch", body)

    def test_kill_9_mid_upload_leaves_nothing_after_the_sweep(self):
        c = self.cluster(overrides={"consumer": {"lease-seconds": 10, "heartbeat-seconds": 2,
                                                 "retry-backoff-seconds": [1, 2]},
                                    "reconciler": {"interval-seconds": 1}})
        c.stop_center()
        c.start_center()
        token = c.token("u1", "1")
        c.faults(hangMs=150, hangCount=1000)  # ~18 s for the 120 batches of the tenant
        created = c.create(token, parameters={}, fmt="CSV")
        task_id = created["data"]["id"]
        partial = None
        deadline = time.time() + 120
        while partial is None and time.time() < deadline:
            partial = next((line for line in self.storage_list(c)
                            if line[2] == "partial" and f"/{task_id}/" in line[0]), None)
            time.sleep(0.2)
        self.assertIsNotNone(partial, "the multipart upload never showed up as partial")
        self.assertEqual(partial[1], "-")
        c.kill_center()
        c.faults(hangMs=0, hangCount=0)
        c.start_center()
        task = c.wait_task(token, task_id, timeout=180)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        key = c.task_row(task_id)["object_key"]
        deadline = time.time() + 60
        listed = self.storage_list(c)
        while len(listed) != 1 and time.time() < deadline:
            time.sleep(0.5)
            listed = self.storage_list(c)
        # The dead attempt's upload was aborted by the sweep; only the retry's file is left.
        self.assertEqual(listed, [[key, task["sizeBytes"], "complete"]])
        self.assertNotIn(partial[0].split("?")[0], key)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
