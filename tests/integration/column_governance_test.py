"""Column governance end to end (docs/configuration.md#column-governance-columns): the
built export-center and customer-service binaries, both data routes.

A requester without the columns' permission gets, in the XLSX file read back with
openpyxl, the governed columns masked (first/last characters kept, by code point:
Chinese names), hashed (hex SHA-256, cut) or omitted — on the provider route
(CUSTOMER_LIST) and the SQL-template route (ORDER_LIST); the preview shows the same
cells; the task JSON says how many columns were masked and omitted. A requester
holding the permissions gets every column as the source sends it.

A cell of a governed column that does not parse (an order whose `paid` holds text, on the
SQL-template route) fails the task with a message that names the column and withholds the
value — in failureMessage, the list, the timeline, the webhook's payload, the preview's 400,
the operators' failureDetail and the log — while a requester who may see the column gets
the value quoted; the operators' console shows the failure in full where the user gets it
classified (docs/task-lifecycle.md#failure-classes).

Run: /usr/bin/python3 column_governance_test.py BUILD_DIR [-k NAME]
"""
import hashlib
import os
import sqlite3
import sys
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from harness import ENDED, Cluster  # noqa: E402
from order_list_test import expected_orders, order_definition, order_overrides  # noqa: E402

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
    # The orders again, with `paid` governed: tenant 9's one order holds text there.
    paid = order_definition("ORDER_LIST", "strict")
    paid["title"] = "ORDER_LIST_PAID"
    paid["columns"] = {"paid": {"required-permission": FINANCE, "without": "omit"}}
    over["definitions"]["ORDER_LIST_PAID"] = paid
    return over


SECRET = "SECRET-PAID-4242"
# Delivery fails (nothing listens on port 9); the payload is what is checked.
WEBHOOK = {"notifications": {"allowed-targets": ["127.0.0.1:9"], "backoff-seconds": [60],
                             "receivers": {"audit-hook": {
                                 "url": "http://127.0.0.1:9/hooks/export",
                                 "secret": "webhook-secret-0123456789abcdef"}}}}


class ColumnGovernance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=3300, prefix="ec-governance-")
        cls.c.write_config({**governed_overrides(cls.c.dir), **WEBHOOK})
        cls.c.start()
        cls.db = os.path.join(cls.c.dir, "customers.db")
        # Tenant 9's only order: `paid` holds text, which is not a BOOLEAN.
        with sqlite3.connect(cls.db) as replica:
            replica.execute("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                            (990001, "9", "SO9900000001", 1, "CUS00000001", "PAID", "WEB", 1234,
                             1, SECRET, "2024-03-01", 1709251200000))

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


    # ---- a governed value never leaves through a message ---------------------

    def test_a_governed_cells_value_never_leaves_through_a_message(self):
        token = self.c.token("gov-msg", "9", perms=EXPORT_PERMS)  # paid is omitted for them
        created = self.c.create(token, export_type="ORDER_LIST_PAID", fmt="XLSX")
        self.assertEqual(created["code"], "200", created)
        task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
        self.assertEqual(task["status"], "FAILED", task)
        self.assertEqual(task["failureCode"], "INVALID_DATA", task)
        message = task["failureMessage"]
        self.assertIn("paid", message)
        self.assertIn("[withheld: a governed column]", message)
        self.assertNotIn(SECRET, message)
        for path in (f"/export-tasks/{task['id']}", f"/export-tasks/{task['id']}/timeline",
                     "/export-tasks?size=100"):
            body = self.c.api("GET", path, token).body.decode()
            self.assertIn(task["id"], body)
            self.assertNotIn(SECRET, body, path)
        ended = [e for e in self.c.api("GET", f"/export-tasks/{task['id']}/timeline",
                                       token).json()["data"]["events"] if e["kind"] == "FINISHED"]
        self.assertEqual(ended[-1]["details"]["message"], message[:200])
        self.assertNotIn("detail", ended[-1]["details"])  # the operators' text is not the user's
        # The webhook's payload, written with the end state.
        payloads = [r["payload_json"] for r in self.c.db().query(
            "SELECT payload_json FROM export_notification WHERE task_id = ?", (int(task["id"]),))]
        self.assertEqual(len(payloads), 1)
        self.assertIn("[withheld: a governed column]", payloads[0])
        self.assertNotIn(SECRET, payloads[0])
        # The preview's 400.
        preview = self.c.api("POST", "/export-previews", token,
                             {"exportType": "ORDER_LIST_PAID", "parameters": {},
                              "format": "XLSX"}).json()
        self.assertEqual(preview["code"], "400", preview)
        self.assertIn("paid", preview["message"])
        self.assertNotIn(SECRET, preview["message"])
        # The operators' console: the full text, still without the value.
        op = self.c.token("gov-op", "9", perms=("platform:export:operate",))
        detail = self.c.api("GET", f"/operator/tasks/{task['id']}", op).json()
        self.assertEqual(detail["code"], "200", detail)
        self.assertIn("InvalidArgument", detail["data"]["task"]["failureDetail"])
        self.assertIn("paid", detail["data"]["task"]["failureDetail"])
        self.assertNotIn(SECRET, str(detail))
        self.assertNotIn(SECRET, self.c.log())
        # Control: a requester who may see `paid` gets the value quoted, so the
        # checks above can fail.
        finance = self.c.token("gov-msg-fin", "9", perms=EXPORT_PERMS + (FINANCE,))
        created = self.c.create(finance, export_type="ORDER_LIST_PAID", fmt="XLSX")
        seen = self.c.wait_task(finance, created["data"]["id"], states=ENDED)
        self.assertEqual(seen["status"], "FAILED", seen)
        self.assertIn(SECRET, seen["failureMessage"])

    def test_a_governed_provider_cells_value_never_leaves_through_a_message(self):
        # creditLimit (INTEGER, omitted without FINANCE) arrives as text on the provider route.
        token = self.c.token("gov-msg-p", "1", perms=EXPORT_PERMS)
        op = self.c.token("gov-op1", "1", perms=("platform:export:operate",))
        self.c.faults(batchCell={"column": "creditLimit", "value": "SECRET-CREDIT-777"})
        try:
            created = self.c.create(token, parameters={"status": "ACTIVE"}, fmt="CSV")
            task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
            preview = self.c.api("POST", "/export-previews", token,
                                 {"exportType": "CUSTOMER_LIST",
                                  "parameters": {"status": "ACTIVE"}}).json()
        finally:
            self.c.faults(batchCell=None)
        self.assertEqual(task["status"], "FAILED", task)
        self.assertIn("creditLimit", task["failureMessage"])
        self.assertIn("[withheld: a governed column]", task["failureMessage"])
        self.assertEqual(preview["code"], "400", preview)
        self.assertIn("creditLimit", preview["message"])
        for text in (str(task), str(preview), self.c.api("GET", f"/export-tasks/{task['id']}/"
                                                          "timeline", token).body.decode(),
                     str(self.c.api("GET", f"/operator/tasks/{task['id']}", op).json()),
                     self.c.log()):
            self.assertNotIn("SECRET-CREDIT-777", text)

    def test_the_operators_see_in_full_what_the_user_gets_classified(self):
        # The SQL contract loses a column: the user's message is the classified sentence,
        # the operators' detail (task and timeline) names the cause.
        token = self.c.token("gov-why", "1", perms=EXPORT_PERMS + (FINANCE,))
        op = self.c.token("gov-op1", "1", perms=("platform:export:operate",))
        self.c.faults(sqlReplace=[{"from": "o.paid AS paid", "to": "o.paid AS paid_renamed"}])
        try:
            created = self.c.create(token, export_type="ORDER_LIST", fmt="CSV")
            task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
        finally:
            self.c.faults(sqlReplace=[])
        self.assertEqual(task["status"], "FAILED", task)
        classified = "The business system sent data this export type does not accept"
        self.assertEqual(task["failureMessage"], classified, task)
        self.assertNotIn("failureDetail", task)
        detail = self.c.api("GET", f"/operator/tasks/{task['id']}", op).json()
        self.assertEqual(detail["code"], "200", detail)
        why = detail["data"]["task"]["failureDetail"]
        self.assertIn("InvalidArgument", why)
        self.assertIn("paid", why)
        finished = [e for e in detail["data"]["timeline"] if e["kind"] == "FINISHED"][-1]
        self.assertEqual(finished["details"]["detail"], why)
        self.assertEqual(finished["details"]["message"], classified)
        # The user's own timeline has the classified text only.
        mine = self.c.api("GET", f"/export-tasks/{task['id']}/timeline", token).json()
        self.assertNotIn(why, str(mine))

if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
