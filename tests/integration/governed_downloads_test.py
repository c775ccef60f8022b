"""Column governance holds for every reader of a file (docs/http-api.md#column-governance-of-downloads):
the built center and customer-service binaries, both data routes, local storage and a real
S3-compatible server (S3Proxy, scripts/test-s3.sh) streamed and presigned.

A file is governed for its requester at create. Each reader other than the requester — a
platform:download:all holder without the columns' permissions, whoever follows a link such a
holder would sign, the requester after a permission was taken away — gets it only when it is
no wider than the reader's own; otherwise 403 with data.reason COLUMNS_NOT_PERMITTED, which
offers export again, and export again writes the reader's own governed file. Checked for the
direct download, the signed link and the presigned redirect (no redirect is made for a refused
reader), for a file of the provider route (CUSTOMER_LIST) and of the SQL-template route
(ORDER_LIST).

Run: /usr/bin/python3 governed_downloads_test.py BUILD_DIR [-k NAME]
"""
import io
import json
import os
import sys
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
from column_governance_test import CONTACT, EXPORT_PERMS, FINANCE, governed_overrides  # noqa: E402
from harness import ENDED, Cluster, deep_merge, request  # noqa: E402
from s3_storage_test import S3Server, get_no_redirect  # noqa: E402

BUILD_DIR = None
DOWNLOAD_ALL = "platform:download:all"
API = "/api/platform/v1/files"
# A small export of each route: the refusals are what is checked, not the volume.
EXPORTS = (("CUSTOMER_LIST", {"status": "ACTIVE", "keyword": "柏悦"}, ["creditLimit"]),
           ("ORDER_LIST", {"status": "PAID"}, ["amount"]))


class GovernedDownloads:
    """The checks; a subclass says where the files live (setUpClass)."""

    # Filled by the subclass: the centers to download from, each (base URL, answer of a
    # download that hands out the file: 200 streamed or 302 presigned).
    centers = ()

    @classmethod
    def start(cls, storage=None, prefix="ec-governed-"):
        cls.c = Cluster(BUILD_DIR, seed=3300, prefix=prefix)
        over = governed_overrides(cls.c.dir)
        if storage:
            over = deep_merge(over, {"storage": storage})
        cls.c.write_config(over)
        cls.c.start()

    def task_of(self, token, export_type, parameters):
        created = self.c.create(token, export_type=export_type, parameters=parameters, fmt="XLSX")
        self.assertEqual(created["code"], "200", created)
        task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        return task

    def download(self, base, task_id, token):
        return get_no_redirect(f"{base}{API}/export-tasks/{task_id}/download", token)

    def sign(self, base, task_id, token):
        return request("POST", f"{base}{API}/export-tasks/{task_id}/download-url",
                       token=token).json()

    def assert_refused(self, status, body, task_id, columns):
        self.assertEqual(status, 403, body[:300])
        answer = json.loads(body)
        self.assertEqual(answer["code"], "403", answer)
        self.assertEqual(answer["data"]["reason"], "COLUMNS_NOT_PERMITTED", answer)
        self.assertEqual(answer["data"]["columns"], columns, answer)
        self.assertEqual(answer["data"]["exportAgain"],
                         f"{API}/export-tasks/{task_id}/export-again", answer)
        self.assertIn("export again", answer["message"])

    def assert_handed_out(self, status, headers, body, ok):
        self.assertEqual(status, ok, body[:300])
        if ok == 302:
            self.assertIn("X-Amz-Signature=", headers["Location"])

    def test_every_reader_gets_only_a_file_no_wider_than_their_own(self):
        full_perms = EXPORT_PERMS + (CONTACT, FINANCE)
        owner = self.c.token("gov-owner", "1", perms=full_perms)
        # download:all, neither column permission: every governed column is wider.
        admin = self.c.token("gov-admin", "1", perms=EXPORT_PERMS + (DOWNLOAD_ALL,))
        # The owner after FINANCE was taken away: only the omitted column is wider.
        demoted = self.c.token("gov-owner", "1", perms=EXPORT_PERMS + (CONTACT,))
        # A download:all holder who may see every column.
        auditor = self.c.token("gov-auditor", "1", perms=full_perms + (DOWNLOAD_ALL,))
        for export_type, params, finance_columns in EXPORTS:
            with self.subTest(export_type=export_type):
                task = self.task_of(owner, export_type, params)
                self.assertEqual(task["columnPolicy"]["masked"] + task["columnPolicy"]["omitted"],
                                 0, task)
                every = ["customerName", "customerCode", "creditLimit"] \
                    if export_type == "CUSTOMER_LIST" else ["customer_name", "order_no", "amount"]
                for base, ok in self.centers:
                    # The requester with the permissions of create: handed out.
                    status, headers, body = self.download(base, task["id"], owner)
                    self.assert_handed_out(status, headers, body, ok)
                    link = self.sign(base, task["id"], owner)
                    self.assertEqual(link["code"], "200", link)
                    self.assert_handed_out(*get_no_redirect(link["data"]["url"]), ok)
                    # A download:all holder: refused, no redirect, nothing counted.
                    before = int(self.c.task_row(task["id"])["download_count"])
                    status, headers, body = self.download(base, task["id"], admin)
                    self.assert_refused(status, body, task["id"], every)
                    self.assertIsNone(headers.get("Location"))
                    refused_link = self.sign(base, task["id"], admin)
                    self.assertEqual(refused_link["code"], "403", refused_link)
                    self.assertEqual(refused_link["data"]["reason"], "COLUMNS_NOT_PERMITTED")
                    self.assertEqual(int(self.c.task_row(task["id"])["download_count"]), before)
                    # The requester after a permission was taken away.
                    status, _, body = self.download(base, task["id"], demoted)
                    self.assert_refused(status, body, task["id"], finance_columns)
                    self.assertEqual(self.sign(base, task["id"], demoted)["code"], "403")

                # Export again: the admin's own governed file, which the admin may read.
                again = self.c.api("POST", f"/export-tasks/{task['id']}/export-again",
                                   admin).json()
                self.assertEqual(again["code"], "200", again)
                mine = self.c.wait_task(admin, again["data"]["id"], states=ENDED)
                self.assertEqual(mine["status"], "SUCCEEDED", mine)
                self.assertEqual(mine["columnPolicy"]["omitted"], 1, mine)
                for base, ok in self.centers:
                    status, headers, body = self.download(base, mine["id"], admin)
                    self.assert_handed_out(status, headers, body, ok)
                    # ... and so may a reader who may see more: the file is narrower.
                    status, headers, body = self.download(base, mine["id"], auditor)
                    self.assert_handed_out(status, headers, body, ok)
                    if ok == 200:
                        sheet = openpyxl.load_workbook(io.BytesIO(body)).worksheets[0]
                        header = next(sheet.iter_rows(max_row=1, values_only=True))
                        self.assertNotIn("信用额度" if export_type == "CUSTOMER_LIST" else "金额",
                                         header)


class LocalStorage(GovernedDownloads, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.start()
        cls.centers = ((cls.c.base, 200),)

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()


class S3Storage(GovernedDownloads, unittest.TestCase):
    """The center streams from S3; a second center on the same database and bucket
    answers downloads with presigned redirects."""

    @classmethod
    def setUpClass(cls):
        cls.s3 = S3Server()
        cls.c = None
        try:
            bucket = cls.s3.new_bucket(f"governed-{os.getpid()}")
            cls.start(storage=cls.s3.storage_config(bucket), prefix="ec-governed-s3-")
            _, port = cls.c.start_extra_center(
                {"storage": {"s3": {"download": "presigned"}}}, "presigning")
            cls.centers = ((cls.c.base, 200), (f"http://127.0.0.1:{port}", 302))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.c:
            cls.c.cleanup()
        cls.s3.stop()


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
