"""Data text cannot take the center down (docs/guarantees.md, docs/task-lifecycle.md#failure-classes):
the built export-center and customer-service binaries, both data routes, with
the download-center page's live task stream (SSE) open the whole time.

- a long Chinese text (`下单日期2026年12月1日` repeated, far past the 64 bytes a
  message quotes, where the old cut fell inside a character) in a DATE, a DECIMAL and an INTEGER column, on the provider
  route (CUSTOMER_LIST; the sample service's batchCell fault puts it in the
  first row) and on the sql-template route (ORDER_LIST; its sqlReplace fault
  makes the template select it): the task ends FAILED with a readable message
  that names the column and quotes the value whole characters only (no
  U+FFFD), the stream carries that FAILED event and keeps working, /healthz
  answers, and the next export succeeds;
- a replica TEXT value that is not UTF-8 (bytes 53 4F FF 4B): the preview and
  the XLSX export finish, the cell reads "SO\\ufffdK" in both (openpyxl);
- all of it once per database: the service's SQLite file as replica with the
  tasks in SQLite, then a real PostgreSQL and a real MariaDB holding both the
  tasks (their final write refuses text that is not UTF-8) and the replica
  (on PostgreSQL a SQL_ASCII database: a UTF8 one cannot hold such bytes);
- a provider cell nested a million arrays deep (2 MB; docs/fuzzing.md#nesting): the task ends
  FAILED (INVALID_DATA) and the log says the answer was nested deeper than 64
  levels, serve lives on, the stream keeps working and the next export succeeds.

One started center per database class; each case is one small export.

Run: /usr/bin/python3 text_containment_test.py BUILD_DIR [-k NAME]
"""
import os
import sys
import time
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
from harness import API, PostgresDb, TaskStream, request  # noqa: E402
from harness import ENDED, Cluster  # noqa: E402
from order_list_test import order_overrides  # noqa: E402
from replica import Replica  # noqa: E402

BUILD_DIR = None
PERMS = ("platform:customer:export", "platform:order:export")
# A Chinese date as business tables write it, repeated: 168 bytes, and the
# old cuts (byte 64 of the value, byte 61 of its JSON) both fell inside a
# character. (Plain "2026年12月1日" is 16 bytes: a repeat of it is cut between
# characters by luck.)
DATE_TEXT = "下单日期2026年12月1日"
LONG_CJK = DATE_TEXT * 6
CUSTOMERS = 300
ORDERS = 600
FEW_CUSTOMERS = {"keyword": "柏悦"}  # a handful of rows: one batch

# The column of each type on each route: (column key, XLSX title).
PROVIDER_COLUMNS = {"DATE": "registeredOn", "DECIMAL": "balance", "INTEGER": "creditLimit"}
ORDER_SELECT = {"DATE": "o.order_date AS order_date", "INTEGER": "o.quantity AS quantity"}
ORDER_KEYS = {"DATE": "order_date", "DECIMAL": "amount", "INTEGER": "quantity"}
# The template's amount expression per replica dialect (order_scenario.cc).
AMOUNT_SELECT = {
    "sqlite": "printf('%d.%02d', o.amount_cents / 100, o.amount_cents % 100) AS amount",
    "postgres": "CAST(o.amount_cents / 100.0 AS NUMERIC(18,2)) AS amount",
    "mysql": "CAST(o.amount_cents / 100 AS DECIMAL(18,2)) AS amount",
}
# order_no as the bytes 53 4F FF 4B ("SO", an invalid byte, "K"), per dialect.
BAD_ORDER_NO = {
    "sqlite": "CAST(X'534FFF4B' AS TEXT) AS order_no",
    "postgres": "convert_from(decode('534fff4b', 'hex'), 'SQL_ASCII') AS order_no",
    "mysql": "X'534FFF4B' AS order_no",
}


class TextContainment:
    """The cases for one database (KIND); a subclass sets it. One center, one
    customer service, one open task stream for the class."""

    KIND = None

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix=f"ec-text-{cls.KIND}-")
        cls.replica = None
        cls.stream = None
        try:
            over = order_overrides(cls.c.dir, **{"customer-service": {"seed-orders": ORDERS}})
            cls.dialect = "sqlite"
            if cls.KIND != "sqlite":
                cls.replica = Replica(cls.KIND)
                url = cls.replica.start()
                cls.dialect = cls.replica.dialect
                datasource = cls.replica.datasource()
                if cls.KIND == "postgres":
                    over["database"] = {"kind": "postgres", "postgres-url": url}
                    # The tasks stay in the UTF8 database; the replica gets one
                    # that keeps any bytes, as a legacy database may.
                    cls.replica.db.execute("CREATE DATABASE replica_bytes ENCODING 'SQL_ASCII'"
                                           " LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
                    datasource["url"] = url.rsplit("/", 1)[0] + "/replica_bytes"
                    cls.replica.db = PostgresDb(datasource["url"])
                else:
                    over["database"] = {"kind": "mysql", "mysql-url": url}
                over["customer-service"]["replica-dialect"] = cls.dialect
                over["datasources"] = {"replica": datasource}
            cls.c.write_config(over)
            cls.c.start_provider()  # seeds the service's SQLite file
            cls.db = os.path.join(cls.c.dir, "customers.db")
            if cls.replica is not None:
                cls.replica.load(cls.db)
            cls.c.start_center()
            cls.user_token = cls.c.token(f"text-{cls.KIND}", "1", perms=PERMS)
            cls.stream = TaskStream(cls.c.center_port, cls.user_token)
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.stream is not None:
            cls.stream.close()
        cls.c.cleanup()
        if cls.replica is not None:
            cls.replica.stop()

    def tearDown(self):
        self.c.faults(batchCell=None, sqlReplace=None)

    # ---- helpers ---------------------------------------------------------------------

    def one_order_no(self):
        import sqlite3
        con = sqlite3.connect(self.db)
        try:
            return con.execute("SELECT order_no FROM orders WHERE tenant_id = '1'"
                               " ORDER BY id LIMIT 1").fetchone()[0]
        finally:
            con.close()

    def run_export(self, export_type, parameters, fmt="XLSX"):
        created = self.c.create(self.user_token, export_type=export_type, parameters=parameters,
                                fmt=fmt)
        self.assertEqual(created["code"], "200", created)
        return self.c.wait_task(self.user_token, created["data"]["id"], states=ENDED, timeout=120)

    def assert_center_up(self):
        self.assertIsNone(self.c.center.poll(), "the center process ended")
        self.assertEqual(request("GET", self.c.base + "/healthz").status, 200)
        self.assertTrue(self.stream.open, f"the task stream ended: {self.stream.errors}")
        self.assertEqual(self.stream.errors, [])

    def assert_failed_readably(self, task, key):
        what = f"{self.KIND} {key}: {task}"
        self.assertEqual(task["status"], "FAILED", what)
        self.assertEqual(task["failureCode"], "INVALID_DATA", what)
        message = task["failureMessage"]
        self.assertIn(key, message, what)
        self.assertIn(DATE_TEXT, message, what)  # the value, readable
        self.assertNotIn("\ufffd", message, what)  # never cut inside a character
        self.assertLessEqual(len(message.encode("utf-8")), 1000, what)
        # The page's stream carried the end, with the same message.
        event = self.stream.wait_for(task["id"], "FAILED")
        self.assertEqual(event["failureMessage"], message)
        self.assert_center_up()

    def assert_next_exports_succeed(self):
        self.tearDown()
        for export_type, params in (("CUSTOMER_LIST", FEW_CUSTOMERS),
                                    ("ORDER_LIST", {"keyword": self.one_order_no()})):
            task = self.run_export(export_type, params)
            self.assertEqual(task["status"], "SUCCEEDED", (self.KIND, task))
            self.stream.wait_for(task["id"], "SUCCEEDED")
        self.assert_center_up()

    # ---- long Chinese text in typed columns ---------------------------------------------

    def test_provider_route_long_cjk_value_fails_the_task_readably(self):
        for kind, key in PROVIDER_COLUMNS.items():
            with self.subTest(kind=kind):
                self.c.faults(batchCell={"column": key, "value": LONG_CJK})
                task = self.run_export("CUSTOMER_LIST", FEW_CUSTOMERS)
                self.assert_failed_readably(task, key)
        self.assert_next_exports_succeed()

    def test_sql_template_route_long_cjk_value_fails_the_task_readably(self):
        selects = dict(ORDER_SELECT, DECIMAL=AMOUNT_SELECT[self.dialect])
        keyword = self.one_order_no()
        for kind, select in selects.items():
            with self.subTest(kind=kind):
                key = ORDER_KEYS[kind]
                self.c.faults(sqlReplace=[{"from": select, "to": f"'{LONG_CJK}' AS {key}"}])
                task = self.run_export("ORDER_LIST", {"keyword": keyword})
                self.assert_failed_readably(task, key)
        self.assert_next_exports_succeed()

    # ---- a value nested a million deep (docs/fuzzing.md#nesting) -------------------------

    def test_provider_value_nested_a_million_deep_fails_the_task_clearly(self):
        # 2 MB of brackets in one cell: serve died of a stack overflow in the
        # dump that quoted it. Now the answer is refused before any tree is
        # built (common/nesting.h), a permanent contract failure like any
        # malformed answer, and serve carries on.
        self.c.faults(batchCell={"column": "registeredOn", "value": "2024-02-29",
                                 "nested": 1000000})
        task = self.run_export("CUSTOMER_LIST", FEW_CUSTOMERS)
        what = f"{self.KIND}: {task}"
        self.assertEqual(task["status"], "FAILED", what)
        self.assertEqual(task["failureCode"], "INVALID_DATA", what)
        self.assertEqual(task["failureMessage"],
                         "The business system sent data this export type does not accept", what)
        event = self.stream.wait_for(task["id"], "FAILED")
        self.assertEqual(event["failureMessage"], task["failureMessage"])
        # The operators' log names the refusal.
        self.assertIn(f"taskId={task['id']}", self.c.log())
        refusal = [line for line in self.c.log().splitlines()
                   if f"taskId={task['id']}" in line and "provider batch failed" in line]
        self.assertTrue(refusal, what)
        self.assertIn("provider answer: JSON nested deeper than 64 levels", refusal[0])
        self.assert_center_up()
        self.assert_next_exports_succeed()

    # ---- a replica value that is not UTF-8 ------------------------------------------------

    def test_replica_text_that_is_not_utf8_becomes_replacement_characters(self):
        self.c.faults(sqlReplace=[{"from": "o.order_no AS order_no",
                                   "to": BAD_ORDER_NO[self.dialect]}])
        params = {"keyword": self.one_order_no()}
        p = self.c.api("POST", "/export-previews", self.user_token,
                       {"exportType": "ORDER_LIST", "parameters": params}).json()
        self.assertEqual(p["code"], "200", p)
        self.assertGreater(len(p["data"]["rows"]), 0, p)
        self.assertEqual({row[1] for row in p["data"]["rows"]}, {"SO\ufffdK"}, p)
        task = self.run_export("ORDER_LIST", params)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        r = self.c.api("GET", f"/export-tasks/{task['id']}/download", self.user_token)
        self.assertEqual(r.status, 200)
        path = os.path.join(self.c.dir, f"{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(r.body)
        rows = list(openpyxl.load_workbook(path, read_only=True).worksheets[0]
                    .iter_rows(values_only=True))
        self.assertEqual(len(rows) - 1, len(p["data"]["rows"]))
        self.assertEqual({row[1] for row in rows[1:]}, {"SO\ufffdK"})
        self.stream.wait_for(task["id"], "SUCCEEDED")
        self.assert_center_up()


class TextContainmentOnSqlite(TextContainment, unittest.TestCase):
    KIND = "sqlite"


class TextContainmentOnPostgres(TextContainment, unittest.TestCase):
    KIND = "postgres"


class TextContainmentOnMariaDb(TextContainment, unittest.TestCase):
    KIND = "mariadb"


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
