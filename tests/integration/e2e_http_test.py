"""End to end over HTTP: the built export-center and customer-service binaries,
exports of two tenants, files opened with openpyxl and compared cell by cell
with the customer service's own database; tenant isolation, dedupe, the
active-task limit, and bad input that must change nothing.

Run: /usr/bin/python3 e2e_http_test.py BUILD_DIR
"""
import base64
import csv
import io
import json
import os
import sqlite3
import sys
import unittest
import urllib.parse

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from manifest_check import assert_manifest  # noqa: E402
from harness import Cluster, request  # noqa: E402

BUILD_DIR = None


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=3000).start()
        cls.a1 = cls.c.token("a1", "1")
        cls.a2 = cls.c.token("a2", "1")
        cls.b1 = cls.c.token("b1", "2")
        cls.admin1 = cls.c.token("boss", "1", perms=("platform:customer:export",
                                                     "platform:download:all"))

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def task_count(self, token):
        r = self.c.api("GET", "/export-tasks?size=100", token).json()
        self.assertEqual(r["code"], "200", r)
        return int(r["data"]["total"])

    def download(self, token, task_id, headers=None):
        return self.c.api("GET", f"/export-tasks/{task_id}/download", token, headers=headers)

    def export_and_read(self, token, tenant, parameters, name=None):
        created = self.c.create(token, parameters=parameters, name=name)
        self.assertEqual(created["code"], "200", created)
        task = self.c.wait_task(token, created["data"]["id"])
        self.assertEqual(task["status"], "SUCCEEDED", task)
        r = self.download(token, task["id"])
        self.assertEqual(r.status, 200)
        path = os.path.join(self.c.dir, f"{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(r.body)
        return task, r, openpyxl.load_workbook(path, read_only=False)

    # ---- files are right ------------------------------------------------------

    def test_xlsx_matches_the_provider_database_for_two_tenants(self):
        db = os.path.join(self.c.dir, "customers.db")
        for token, tenant, params in ((self.a1, "1", {"keyword": "柏悦"}),
                                      (self.b1, "2", {"status": "ACTIVE"}),
                                      (self.a1, "1", {})):
            task, _, wb = self.export_and_read(token, tenant, params)
            expected = customer_data.expected_rows(db, tenant, params)
            ws = wb.worksheets[0]
            rows = list(ws.iter_rows(values_only=True))
            self.assertEqual(list(rows[0]), customer_data.TITLES)
            self.assertEqual(len(rows) - 1, len(expected), params)
            self.assertEqual(int(task["totalRows"]), len(expected))
            for got, want in zip(rows[1:], expected):
                for g, w in zip(got, want):
                    self.assertTrue(customer_data.same_cell(g, w), (got, want))
            self.assertEqual(ws.freeze_panes, "A2")
            self.assertTrue(ws["A1"].font.b)

    def test_cell_types_are_real_types(self):
        _, _, wb = self.export_and_read(self.a1, "1", {"status": "ACTIVE"})
        ws = wb.worksheets[0]
        row = next(ws.iter_rows(min_row=2, max_row=2))
        for cell, kind in zip(row, customer_data.KINDS):
            if cell.value is None:
                continue
            self.assertIsInstance(cell.value, customer_data.PY_TYPES[kind], (cell.coordinate, kind))

    def test_csv_export(self):
        created = self.c.create(self.a1, parameters={"keyword": "物流"}, fmt="CSV")
        task = self.c.wait_task(self.a1, created["data"]["id"])
        self.assertEqual(task["status"], "SUCCEEDED", task)
        r = self.download(self.a1, task["id"])
        self.assertTrue(r.body.startswith(b"\xef\xbb\xbf"))
        rows = list(csv.reader(io.StringIO(r.body.decode("utf-8-sig"), newline="")))
        assert_manifest(self, task, r.body, r.headers, parts=[len(rows) - 1])
        self.assertEqual(rows[0], customer_data.TITLES)
        expected = customer_data.expected_rows(os.path.join(self.c.dir, "customers.db"), "1",
                                               {"keyword": "物流"})
        self.assertEqual(len(rows) - 1, len(expected))

    def test_download_headers_keep_chinese_names_and_honour_range(self):
        task, r, _ = self.export_and_read(self.a1, "1", {"keyword": "柏悦"}, name="客户导出/测试")
        disposition = r.headers["Content-Disposition"]
        self.assertIn("filename*=UTF-8''", disposition)
        encoded = disposition.split("filename*=UTF-8''", 1)[1].split(";")[0]
        name = urllib.parse.unquote(encoded)
        self.assertTrue(name.startswith("客户导出测试"), name)
        self.assertTrue(name.endswith(".xlsx"))
        rows = openpyxl.load_workbook(io.BytesIO(r.body)).worksheets[0].max_row - 1
        assert_manifest(self, task, r.body, r.headers, parts=[rows])
        part = self.download(self.a1, task["id"], headers={"Range": "bytes=10-109"})
        self.assertEqual(part.status, 206)
        self.assertEqual(part.body, r.body[10:110])
        # A range carries the digest of the whole file, so the assembled result can be checked.
        self.assertEqual(part.headers["Repr-Digest"], r.headers["Repr-Digest"])
        self.assertEqual(part.headers["Content-Range"], f"bytes 10-109/{len(r.body)}")

    # ---- who sees what --------------------------------------------------------

    def test_another_tenant_cannot_list_read_or_download(self):
        created = self.c.create(self.a1, parameters={"keyword": "科技"})
        task_id = created["data"]["id"]
        self.c.wait_task(self.a1, task_id)
        r = self.c.api("GET", f"/export-tasks/{task_id}", self.b1).json()
        self.assertEqual(r["code"], "404")
        self.assertEqual(self.download(self.b1, task_id).status, 404)
        listed = self.c.api("GET", "/export-tasks?size=100", self.b1).json()
        self.assertNotIn(task_id, [t["id"] for t in listed["data"]["records"]])
        # Same tenant, other user: hidden too, unless platform:download:all.
        self.assertEqual(self.c.api("GET", f"/export-tasks/{task_id}", self.a2).json()["code"],
                         "404")
        self.assertEqual(self.c.api("GET", f"/export-tasks/{task_id}", self.admin1).json()["code"],
                         "200")
        self.assertEqual(self.download(self.admin1, task_id).status, 200)

    # ---- create rules ---------------------------------------------------------

    def test_duplicate_submit_within_60s_returns_the_same_task(self):
        self.c.faults(hangMs=1500, hangCount=2)
        first = self.c.create(self.a2, parameters={"keyword": "重复", "status": "FROZEN"})
        second = self.c.create(self.a2, parameters={"status": "FROZEN", "keyword": "重复"})
        self.assertEqual(first["code"], "200", first)
        self.assertEqual(second["data"]["id"], first["data"]["id"])
        self.c.wait_task(self.a2, first["data"]["id"])

    def test_fourth_active_task_of_one_user_gets_429(self):
        user = self.c.token("busy", "1")
        self.c.faults(hangMs=3000, hangCount=3)
        ids = []
        for k in ("甲", "乙", "丙"):
            r = self.c.create(user, parameters={"keyword": k})
            self.assertEqual(r["code"], "200", r)
            ids.append(r["data"]["id"])
        before = self.task_count(user)
        fourth = self.c.create(user, parameters={"keyword": "丁"})
        self.assertEqual(fourth["code"], "429", fourth)
        self.assertEqual(self.task_count(user), before)
        for task_id in ids:
            self.c.wait_task(user, task_id)

    # ---- bad input changes nothing -------------------------------------------

    def test_bad_input_gets_its_code_and_changes_nothing(self):
        before = self.task_count(self.a1)
        post = lambda raw, ct="application/json", token=self.a1: request(  # noqa: E731
            "POST", self.c.base + "/api/platform/v1/files/export-tasks", token=token, raw=raw,
            headers={"Content-Type": ct})
        cases = {
            "malformed": post(b'{"exportType": "CUSTOMER_LIST",'),
            "duplicate keys": post(b'{"exportType":"CUSTOMER_LIST","exportType":"X"}'),
            "trailing": post(b'{"exportType":"CUSTOMER_LIST"} {}'),
            "content type": post(b'{"exportType":"CUSTOMER_LIST"}', ct="text/plain"),
            "unknown type": post(json.dumps({"exportType": "NOPE"}).encode()),
            "undeclared parameter": post(json.dumps(
                {"exportType": "CUSTOMER_LIST", "parameters": {"tenantId": "2"}}).encode()),
            "long string": post(json.dumps(
                {"exportType": "CUSTOMER_LIST", "parameters": {"keyword": "x" * 257}}).encode()),
            "too deep": post(json.dumps(
                {"exportType": "CUSTOMER_LIST",
                 "parameters": {"keyword": {"a": {"b": 1}}}}).encode()),
            "bad status": post(json.dumps(
                {"exportType": "CUSTOMER_LIST", "parameters": {"status": "GONE"}}).encode()),
            "lower-case format": post(json.dumps(
                {"exportType": "CUSTOMER_LIST", "format": "xlsx"}).encode()),
        }
        for name, r in cases.items():
            self.assertEqual(r.status, 200, name)
            self.assertEqual(r.json()["code"], "400", (name, r.body))
        forged = self.a1[:-4] + ("AAAA" if not self.a1.endswith("AAAA") else "BBBB")
        expired = self.c.expired_token("a1", "1")  # exp past auth.jwt-leeway-seconds (30 s)
        for name, token in (("forged", forged), ("expired", expired), ("none", None)):
            r = post(json.dumps({"exportType": "CUSTOMER_LIST"}).encode(), token=token)
            self.assertEqual(r.json()["code"], "401", name)
        for bad_id in ("0123", "abc", "..%2F..%2Fetc%2Fpasswd", "99999999999999999999"):
            r = self.c.api("GET", f"/export-tasks/{bad_id}", self.a1).json()
            self.assertIn(r["code"], ("400", "404"), bad_id)
            self.assertNotEqual(self.download(self.a1, bad_id).status, 200)
        self.assertEqual(self.c.api("GET", "/export-tasks/123456789", self.a1).json()["code"],
                         "404")
        self.assertEqual(self.task_count(self.a1), before)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
