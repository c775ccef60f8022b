"""ORDER_LIST end to end (docs/sql-template-route.md): the built export-center and
customer-service binaries, the sql-template route paging the customer
service's own SQLite file as the read-only datasource.

- ORDER_LIST (enrichment by callback) and ORDER_LIST_SQL (enrichment by SQL)
  files compared cell by cell with a direct query of that database, the
  enriched customer_name column included;
- a row inserted mid-export under strict consistency -> INCONSISTENT;
- the contract version bumped between create and run -> STALE;
- enrichment failures per mode: a critical column -> FAILED, a non-critical
  one -> blank cells and the task SUCCEEDS;
- an order dated 2023-02-31 in the replica fails the export as a bad cell
  (row, column, value), on XLSX and CSV alike;
- what `${}` may read (docs/sql-template.md#what--may-read): a contract that
  splices the free-text keyword with `${}` ends FAILED with UNSAFE_TEMPLATE and
  the datasource file is never opened; one that splices the allowed-list
  status exports.

Run: /usr/bin/python3 order_list_test.py BUILD_DIR [-k NAME]
"""
import ctypes
import datetime
import os
import sqlite3
import struct
import sys
import time
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
from customer_data import SHANGHAI, guard, same_cell  # noqa: E402
from harness import ENDED, Cluster  # noqa: E402

BUILD_DIR = None
CUSTOMERS = 2000
ORDERS = 3000
BATCH = 400
PERMS = ("platform:order:export",)

TITLES = ["订单ID", "订单号", "客户编码", "客户名称", "状态", "渠道", "金额", "数量", "已支付",
          "下单日期", "创建时间"]

ORDER_PARAMETERS = [
    {"name": "status", "type": "STRING", "allowed": ["NEW", "PAID", "SHIPPED", "DONE", "REFUNDED"]},
    {"name": "channel", "type": "STRING", "allowed": ["WEB", "APP", "STORE"]},
    {"name": "dateFrom", "type": "DATE"},
    {"name": "dateTo", "type": "DATE"},
    {"name": "keyword", "type": "STRING"},
    {"name": "customerCodes", "type": "STRING_LIST"},
]


def order_definition(query_id, consistency):
    return {"title": query_id, "source": "sql-template", "provider-service": "customer-service",
            "query-id": query_id, "datasource": "replica", "consistency": consistency,
            "required-permission": "platform:order:export", "app-scope": "PLATFORM",
            "max-rows": 200000, "max-attempts": 1, "batch-size": BATCH,
            "timezone": "Asia/Shanghai", "parameters": ORDER_PARAMETERS}


def order_overrides(cluster_dir, **extra):
    over = {
        "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 10},
        "customer-service": {"seed-orders": ORDERS},
        "datasources": {"replica": {"kind": "sqlite",
                                    "sqlite-path": os.path.join(cluster_dir, "customers.db")}},
        "definitions": {"ORDER_LIST": order_definition("ORDER_LIST", "strict"),
                        "ORDER_LIST_SQL": order_definition("ORDER_LIST_SQL", "lenient")},
    }
    for key, value in extra.items():
        over[key] = {**over.get(key, {}), **value}
    return over


def expected_orders(db_path, tenant, p, names=True):
    """The rows a correct export holds, straight from the service's database,
    in the template's order (order_date DESC, id)."""
    sql = ("SELECT o.id, o.order_no, o.customer_code, c.name, o.status, o.channel,"
           " o.amount_cents, o.quantity, o.paid, o.order_date, o.created_at"
           " FROM orders o LEFT JOIN customer c"
           "   ON c.tenant_id = o.tenant_id AND c.customer_code = o.customer_code"
           " WHERE o.tenant_id = ?")
    args = [tenant]
    for key, cond in (("status", " AND o.status = ?"), ("channel", " AND o.channel = ?"),
                      ("dateFrom", " AND o.order_date >= ?"), ("dateTo", " AND o.order_date <= ?"),
                      ("keyword", " AND instr(o.order_no, ?) > 0")):
        if p.get(key):
            sql += cond
            args.append(p[key])
    if p.get("customerCodes"):
        sql += " AND o.customer_code IN (" + ",".join("?" * len(p["customerCodes"])) + ")"
        args += p["customerCodes"]
    sql += " ORDER BY o.order_date DESC, o.id"
    con = sqlite3.connect(db_path)
    try:
        rows = con.execute(sql, args).fetchall()
    finally:
        con.close()
    out = []
    for (oid, no, code, name, status, channel, cents, qty, paid, day, created) in rows:
        y, m, d = (int(x) for x in day.split("-"))
        at = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=created) + SHANGHAI
        out.append([oid, guard(no), guard(code), guard(name) if names and name else None,
                    status, channel, cents / 100, qty, bool(paid), datetime.datetime(y, m, d), at])
    return out


class OrderListBase(unittest.TestCase):
    def export(self, token, export_type, parameters, states=ENDED, timeout=180):
        created = self.c.create(token, export_type=export_type, parameters=parameters, fmt="XLSX")
        self.assertEqual(created["code"], "200", created)
        return self.c.wait_task(token, created["data"]["id"], states=states, timeout=timeout)

    def read_rows(self, token, task):
        r = self.c.api("GET", f"/export-tasks/{task['id']}/download", token)
        self.assertEqual(r.status, 200, r.body[:300])
        path = os.path.join(self.c.dir, f"{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(r.body)
        rows = list(openpyxl.load_workbook(path, read_only=True).worksheets[0]
                    .iter_rows(values_only=True))
        self.assertEqual(list(rows[0]), TITLES)
        return [list(row) for row in rows[1:]]

    def assert_cells(self, got_rows, want_rows, what):
        self.assertEqual(len(got_rows), len(want_rows), what)
        for n, (got, want) in enumerate(zip(got_rows, want_rows), start=2):
            for g, w in zip(got, want):
                self.assertTrue(same_cell(g, w), f"{what}: row {n}: got {got} want {want}")


class OrderList(OrderListBase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix="ec-orders-")
        cls.c.write_config(order_overrides(cls.c.dir))
        cls.c.start()
        cls.db = os.path.join(cls.c.dir, "customers.db")
        cls.t1 = cls.c.token("o1", "1", perms=PERMS)
        cls.t2 = cls.c.token("o2", "2", perms=PERMS)

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def tearDown(self):
        self.c.faults(enrichFail=0, hangCount=0, criticalEnrich=False, brokenEnrichSql=False)

    # ---- files are right ------------------------------------------------------

    def test_both_enrichment_modes_match_a_direct_query_cell_by_cell(self):
        codes = [f"CUS{n:08d}" for n in (1, 2, 3, 7, 8, 11, 12, 13)]
        cases = ((self.t1, "1", {}), (self.t2, "2", {"status": "SHIPPED"}),
                 (self.t1, "1", {"dateFrom": "2024-01-02", "dateTo": "2024-01-03",
                                 "keyword": "SO0000001"}),
                 (self.t2, "2", {"channel": "STORE"}),
                 (self.t1, "1", {"customerCodes": codes}))
        for export_type in ("ORDER_LIST", "ORDER_LIST_SQL"):
            for token, tenant, params in cases:
                what = f"{export_type} tenant {tenant} {params}"
                task = self.export(token, export_type, params)
                self.assertEqual(task["status"], "SUCCEEDED", (what, task))
                want = expected_orders(self.db, tenant, params)
                self.assertGreater(len(want), 0, what)
                self.assertEqual(int(task["totalRows"]), len(want), what)
                got = self.read_rows(token, task)
                self.assert_cells(got, want, what)
                # Typed cells: decimals as numbers, dates and datetimes as dates.
                self.assertIsInstance(got[0][6], (int, float))
                self.assertIsInstance(got[0][9], datetime.datetime)
                self.assertIsInstance(got[0][10], datetime.datetime)
                self.assertTrue(all(row[3] for row in got), f"{what}: a blank customer_name")

    # ---- consistency (docs/sql-template-route.md#consistency-checks) ---------------

    def test_row_inserted_mid_export_in_strict_mode_is_inconsistent(self):
        # The callback enrichment of the first page hangs; the row goes in then.
        self.c.faults(hangMs=3000, hangCount=1)
        created = self.c.create(self.t1, export_type="ORDER_LIST", parameters={}, fmt="XLSX")
        self.assertEqual(created["code"], "200", created)
        task_id = created["data"]["id"]
        deadline = time.time() + 60
        while self.c.provider_stats()["hangPending"] > 0:
            self.assertLess(time.time(), deadline, "the export never reached the enrich call")
            time.sleep(0.05)
        con = sqlite3.connect(self.db, timeout=30)
        try:
            with con:
                con.execute("INSERT INTO orders SELECT MAX(id) + 1, '1', 'SO-MID-EXPORT', 1,"
                            " 'CUS00000001', 'NEW', 'WEB', 100, 1, 1, '2024-12-31', 1735574400000"
                            " FROM orders")
            task = self.c.wait_task(self.t1, task_id, states=ENDED)
        finally:
            with con:
                con.execute("DELETE FROM orders WHERE order_no = 'SO-MID-EXPORT'")
            con.close()
        self.assertEqual(task["status"], "INCONSISTENT", task)
        self.assertIn("ALERT: sql-template inconsistent", self.c.log())

    # ---- a day that does not exist (common/civil_day.h) -------------------------------

    def test_an_order_dated_february_31_is_a_bad_cell_not_a_bad_definition(self):
        # SQLite stores '2023-02-31' as written. The route refuses it as it refuses any
        # value of the wrong type, quoting row, column and value, as the provider route
        # does; before, it passed and the writers failed with "bad date".
        token = self.c.token("o7", "7", perms=PERMS)
        con = sqlite3.connect(self.db, timeout=30)
        try:
            with con:
                for n, (no, day) in enumerate((("SO-FEB-28", "2023-03-01"),
                                               ("SO-FEB-31", "2023-02-31")), start=1):
                    con.execute("INSERT INTO orders SELECT MAX(id) + 1, '7', ?, 1, 'CUS00000001',"
                                " 'NEW', 'WEB', 100, 1, 1, ?, 1735574400000 FROM orders",
                                (no, day))
            for fmt in ("XLSX", "CSV"):
                created = self.c.create(token, export_type="ORDER_LIST", parameters={}, fmt=fmt)
                self.assertEqual(created["code"], "200", created)
                task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
                self.assertEqual(task["status"], "FAILED", (fmt, task))
                self.assertEqual(task["failureCode"], "INVALID_DATA", (fmt, task))
                message = task["failureMessage"]
                self.assertTrue(message.startswith("row 2"), (fmt, message))
                self.assertIn("order_date", message)
                self.assertIn('"2023-02-31"', message)
                self.assertNotIn("definition or parameters", message)
        finally:
            with con:
                con.execute("DELETE FROM orders WHERE order_no IN ('SO-FEB-28', 'SO-FEB-31')")
            con.close()

    # ---- enrichment failures (docs/sql-template-route.md#enrichment) -----------------

    def check_blank_names(self, export_type, params):
        task = self.export(self.t1, export_type, params)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        want = expected_orders(self.db, "1", params, names=False)
        self.assert_cells(self.read_rows(self.t1, task), want, export_type + " blank names")
        self.assertIn("ALERT: sql-template enrichment failed taskId=" + task["id"], self.c.log())

    def test_callback_failure_on_a_non_critical_column_leaves_blanks_and_succeeds(self):
        self.c.faults(enrichFail=1000)
        self.check_blank_names("ORDER_LIST", {"status": "DONE"})

    def test_callback_failure_on_a_critical_column_fails_the_task(self):
        self.c.faults(enrichFail=1000, criticalEnrich=True)
        task = self.export(self.t1, "ORDER_LIST", {"status": "NEW"})
        self.assertEqual(task["status"], "FAILED", task)

    def test_enrich_sql_failure_on_a_non_critical_column_leaves_blanks_and_succeeds(self):
        self.c.faults(brokenEnrichSql=True)
        self.check_blank_names("ORDER_LIST_SQL", {"status": "SHIPPED"})

    def test_enrich_sql_failure_on_a_critical_column_fails_the_task(self):
        self.c.faults(brokenEnrichSql=True, criticalEnrich=True)
        task = self.export(self.t1, "ORDER_LIST_SQL", {"status": "REFUNDED"})
        self.assertEqual(task["status"], "FAILED", task)


class FileOpens:
    """Counts how often any process opens `path`, through Linux inotify: the
    center opens the SQLite datasource file for every statement it runs (a
    connection per query), so no open means no SQL."""

    IN_OPEN = 0x20

    def __init__(self, path):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, os.fsencode(path), self.IN_OPEN) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + path)
        self.count = 0

    def opens(self):
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return self.count
            offset = 0
            while offset < len(data):
                _, mask, _, name_len = struct.unpack_from("iIII", data, offset)
                if mask & self.IN_OPEN:
                    self.count += 1
                offset += 16 + name_len

    def close(self):
        os.close(self.fd)


class DollarSplicing(OrderListBase):
    """docs/sql-template.md#what--may-read: the customer service's
    ORDER_LIST_SPLICED_* contracts splice one filter with `${}`. The two
    definitions read a private copy of the orders database, so that a watch
    on that file sees exactly the statements these exports run."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix="ec-orders-dollar-")
        cls.guarded = os.path.join(cls.c.dir, "guarded.db")
        over = order_overrides(cls.c.dir)
        over["datasources"]["guarded"] = {"kind": "sqlite", "sqlite-path": cls.guarded}
        for name, spliced in (("ORDER_SPLICED_STATUS", "STATUS"),
                              ("ORDER_SPLICED_KEYWORD", "KEYWORD")):
            definition = order_definition("ORDER_LIST_SPLICED_" + spliced, "strict")
            definition["datasource"] = "guarded"
            over["definitions"][name] = definition
        cls.c.write_config(over)
        cls.c.start_provider()  # seeds the orders
        cls.db = os.path.join(cls.c.dir, "customers.db")
        src, dst = sqlite3.connect(cls.db), sqlite3.connect(cls.guarded)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # a plain file: no -wal beside it
        finally:
            src.close()
            dst.close()
        cls.c.start_center()
        cls.t1 = cls.c.token("d1", "1", perms=PERMS)

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def setUp(self):
        self.watch = FileOpens(self.guarded)

    def tearDown(self):
        self.watch.close()

    def test_dollar_over_a_free_text_parameter_fails_unsafe_and_runs_no_sql(self):
        attack = ("x%' UNION SELECT id, order_no, customer_code, status, channel, 0, 0, 0,"
                  " order_date, created_at FROM orders WHERE '%' = '")
        for params in ({"keyword": attack}, {"keyword": "SO0000001"}, {}):
            task = self.export(self.t1, "ORDER_SPLICED_KEYWORD", params)
            self.assertEqual(task["status"], "FAILED", (params, task))
            self.assertEqual(task["failureCode"], "UNSAFE_TEMPLATE", (params, task))
            self.assertIn("${keyword}", task["failureMessage"], task)
            self.assertNotIn("UNION", task["failureMessage"], task)
        self.assertEqual(self.watch.opens(), 0, "the datasource was opened: SQL ran")
        self.assertIn("SECURITY: sql-template", self.c.log())

    def test_dollar_over_an_allowed_list_parameter_exports(self):
        params = {"status": "PAID"}
        task = self.export(self.t1, "ORDER_SPLICED_STATUS", params)
        self.assertEqual(task["status"], "SUCCEEDED", task)
        want = expected_orders(self.db, "1", params)
        self.assertGreater(len(want), 0)
        self.assert_cells(self.read_rows(self.t1, task), want, "ORDER_SPLICED_STATUS")
        # The watch does see this route's statements, so the zero above means none ran.
        self.assertGreater(self.watch.opens(), 0)


class ContractVersion(OrderListBase):
    """Created under contract version 1, run under 2: the center holds the
    command (publisher off) while the customer service restarts with the
    `customer-service.contract-version` key bumped."""

    def setUp(self):
        self.c = Cluster(BUILD_DIR, seed=200, prefix="ec-orders-stale-")
        self.base = order_overrides(self.c.dir, **{"customer-service": {"seed-orders": 500}})

    def tearDown(self):
        self.c.cleanup()

    def test_version_bumped_between_create_and_run_is_stale(self):
        self.c.write_config({**self.base, "publisher": {"enabled": False}})
        self.c.start()
        token = self.c.token("s1", "1", perms=PERMS)
        created = self.c.create(token, export_type="ORDER_LIST", parameters={}, fmt="XLSX")
        self.assertEqual(created["code"], "200", created)
        task_id = created["data"]["id"]
        self.assertEqual(int(self.c.task_row(task_id)["contract_version"]), 1)
        self.c.stop()
        bumped = order_overrides(self.c.dir, **{"customer-service": {"seed-orders": 500,
                                                                     "contract-version": 2}})
        self.c.write_config(bumped)  # publisher back on
        self.c.start()
        task = self.c.wait_task(token, task_id, states=ENDED)
        self.assertEqual(task["status"], "STALE", task)
        # A task created under version 2 runs.
        fresh = self.export(token, "ORDER_LIST", {"status": "DONE"})
        self.assertEqual(fresh["status"], "SUCCEEDED", fresh)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
