"""Column governance end to end (docs/configuration.md#column-governance-columns): the
built export-center and customer-service binaries, both data routes.

A requester without the columns' permission gets, in the XLSX file read back with
openpyxl, the governed columns masked (first/last characters kept, by code point:
Chinese names), hashed (hex SHA-256, cut) or omitted — on the provider route
(CUSTOMER_LIST) and the SQL-template route (ORDER_LIST); the preview shows the same
cells; the task JSON says how many columns were masked and omitted. A requester
holding the permissions gets every column as the source sends it.

Run: /usr/bin/python3 column_governance_test.py BUILD_DIR [-k NAME]
"""
import hashlib
import os
import sys
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from harness import Cluster  # noqa: E402
from order_list_test import expected_orders, order_overrides  # noqa: E402

BUILD_DIR = None
CONTACT = "platform:customer:contact"
FINANCE = "platform:customer:finance"
EXPORT_PERMS = ("platform:customer:export", "platform:order:export")


def mask(text, first, last):
    """The rule of the docs, written independently: code points, at least one hidden."""
    n = len(text)
    if n == 0:
        return ""
    first = min(first, n - 1)
    last = min(last, n - 1 - first)
    return text[:first] + "*" * (n - first - last) + (text[n - last:] if last else "")


def sha(text, chars):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def unguard(text):
    """The raw text behind a value customer_data.guard prefixed."""
    if text and len(text) > 1 and text[0] == "'" and text[1] in "=+-@\t\r":
        return text[1:]
    return text


def governed_overrides(cluster_dir):
    over = order_overrides(cluster_dir)
    over["definitions"]["CUSTOMER_LIST"] = {"columns": {
        "customerName": {"required-permission": CONTACT, "without": "mask", "keep-first": 1},
        "customerCode": {"required-permission": CONTACT, "without": "hash", "hash-chars": 16},
        "creditLimit": {"required-permission": FINANCE, "without": "omit"},
    }}
    over["definitions"]["ORDER_LIST"]["columns"] = {
        "customer_name": {"required-permission": CONTACT, "without": "mask", "keep-first": 1,
                          "keep-last": 1},
        "order_no": {"required-permission": CONTACT, "without": "mask", "keep-first": 3,
                     "keep-last": 4},
        "amount": {"required-permission": FINANCE, "without": "omit"},
    }
    return over


class ColumnGovernance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=3300, prefix="ec-governance-")
        cls.c.write_config(governed_overrides(cls.c.dir))
        cls.c.start()
        cls.db = os.path.join(cls.c.dir, "customers.db")

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def xlsx_rows(self, token, export_type, parameters):
        task, body = self.c.export_file(token, export_type, parameters, "XLSX")
        path = os.path.join(self.c.dir, f"{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(body)
        book = openpyxl.load_workbook(path, read_only=True)
        try:
            return task, [list(row) for row in book.worksheets[0].iter_rows(values_only=True)]
        finally:
            book.close()

    def preview(self, token, export_type, parameters):
        body = {"exportType": export_type, "parameters": parameters, "format": "XLSX"}
        answer = self.c.api("POST", "/export-previews", token, body).json()
        self.assertEqual(answer["code"], "200", answer)
        return answer["data"]

    def assert_policy(self, task, masked, omitted):
        policy = task["columnPolicy"]
        self.assertEqual((policy["masked"], policy["omitted"]), (masked, omitted), policy)

    # ---- provider route --------------------------------------------------------

    def test_provider_route_masks_hashes_and_omits_without_the_permissions(self):
        token = self.c.token("gov-plain", "1", perms=EXPORT_PERMS)
        params = {"status": "ACTIVE"}
        task, rows = self.xlsx_rows(token, "CUSTOMER_LIST", params)
        self.assert_policy(task, 2, 1)
        self.assertEqual(rows[0], ["客户ID", "客户编码", "公司名称", "状态", "账户余额", "VIP",
                                   "注册日期", "最近下单时间", "备注"])
        want = customer_data.expected_rows(self.db, "1", params)
        self.assertEqual(len(rows) - 1, len(want))
        self.assertGreater(len(want), 0)
        for got, w in zip(rows[1:], want):
            cid, code, name = w[0], unguard(w[1]), unguard(w[2])
            self.assertEqual(got[0], cid)
            self.assertEqual(got[1], sha(code, 16), got)
            self.assertEqual(got[2], customer_data.guard(mask(name, 1, 0)), got)
            self.assertIsInstance(got[2], str)
            self.assertEqual(got[3], w[3])
        # Chinese names keep their first character, never a byte of it.
        self.assertTrue(any(len(r[2]) > 1 and "\u4e00" <= r[2][0] <= "\u9fff" for r in rows[1:]))

        data = self.preview(token, "CUSTOMER_LIST", params)
        self.assertEqual([c["key"] for c in data["columns"]],
                         ["id", "customerCode", "customerName", "status", "balance", "vip",
                          "registeredOn", "lastOrderAt", "remarks"])
        self.assertEqual(data["columns"][2]["type"], "STRING")
        self.assertEqual([r[1:3] for r in data["rows"]], [r[1:3] for r in rows[1:21]])
        self.assertEqual(data["columnPolicy"]["masked"], 2)

    def test_provider_route_shows_every_column_with_the_permissions(self):
        token = self.c.token("gov-full", "1", perms=EXPORT_PERMS + (CONTACT, FINANCE))
        params = {"status": "ACTIVE"}
        task, rows = self.xlsx_rows(token, "CUSTOMER_LIST", params)
        self.assert_policy(task, 0, 0)
        self.assertEqual(len(rows[0]), 10)
        want = customer_data.expected_rows(self.db, "1", params)
        for got, w in zip(rows[1:], want):
            self.assertEqual(got[1:3], w[1:3])
            self.assertEqual(got[5], w[5])

    # ---- SQL-template route ----------------------------------------------------

    def test_sql_route_masks_and_omits_without_the_permissions(self):
        token = self.c.token("gov-sql", "1", perms=EXPORT_PERMS + (FINANCE,))
        # FINANCE held: amount stays; CONTACT missing: the two masks apply.
        task, rows = self.xlsx_rows(token, "ORDER_LIST", {})
        self.assert_policy(task, 2, 0)
        self.assertEqual(rows[0][:4], ["订单ID", "订单号", "客户编码", "客户名称"])
        self.assertIn("金额", rows[0])
        want = expected_orders(self.db, "1", {})
        self.assertEqual(len(rows) - 1, len(want))
        for got, w in zip(rows[1:], want):
            self.assertEqual(got[0], w[0])
            self.assertEqual(got[1], customer_data.guard(mask(unguard(w[1]), 3, 4)), got)
            want_name = customer_data.guard(mask(unguard(w[3]), 1, 1)) if w[3] else None
            self.assertEqual(got[3], want_name, got)
        self.assertTrue(any(r[1].count("*") > 0 for r in rows[1:]))

        token = self.c.token("gov-sql-plain", "1", perms=EXPORT_PERMS)
        task, rows = self.xlsx_rows(token, "ORDER_LIST", {})
        self.assert_policy(task, 2, 1)
        self.assertNotIn("金额", rows[0])
        self.assertEqual(len(rows[0]), 10)
        data = self.preview(token, "ORDER_LIST", {})
        self.assertNotIn("amount", [c["key"] for c in data["columns"]])
        self.assertEqual([r[1] for r in data["rows"]], [r[1] for r in rows[1:21]])


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
