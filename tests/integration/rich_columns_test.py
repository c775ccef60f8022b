"""Rich columns end to end (issue 45; docs/xlsx.md#rich-columns): the built
export-center and customer-service binaries, both routes, the options sent
by the C++ SDK on the wire, the definition's languages and labels.

- ORDER_LINES (provider route): a two-level header, the order number merged,
  the order date and the status merged within the order number, the status
  labelled by the service in two languages, the channel labelled by the
  definition (the platform's dictionary), totals on quantity and amount, a
  highlight. openpyxl reads the header rows, the merged ranges, the labels,
  the cached totals (compared with an independent sum of the source rows) and
  the conditional format; python-calamine (scripts/install-calamine.sh) reads
  every cell and merge as openpyxl does; LibreOffice headless recalculates the
  totals to the same values (tests/render/recalc_xlsx.py). The definition's
  locale picks the language (zh-CN, en); the preview shows the labels.
- Column governance (issue 43) of a labelled, merged column: a requester
  without the permission gets the masked labels, merged as before; a value
  without a label under labelMissing FAIL fails the task naming row and
  column, and the value only when the column is not governed.
- ORDER_LIST_RICH (sql-template route) on a SQLite, a PostgreSQL and a
  MariaDB replica (replica.py): the same checks against a direct query.

Run: /usr/bin/python3 rich_columns_test.py BUILD_DIR [-k NAME]
"""
import datetime
import json
import os
import sqlite3
import subprocess
import sys
import unittest
from decimal import Decimal

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import ENDED, REPO, Cluster  # noqa: E402
from replica import Replica  # noqa: E402

sys.path.insert(0, subprocess.check_output(
    [os.path.join(REPO, "scripts", "install-calamine.sh")], text=True).strip())
from python_calamine import CalamineWorkbook  # noqa: E402

BUILD_DIR = None
CUSTOMERS = 300
ORDERS = 600  # tenant 1 holds 360 of them
PERMS = ("platform:order:export",)
FULL = PERMS + ("platform:order:status",)  # sees ORDER_LINES' status unmasked
STATUS_ZH = {"NEW": "新建", "PAID": "已支付", "SHIPPED": "已发货", "DONE": "已完成",
             "REFUNDED": "已退款"}
STATUS_EN = {"NEW": "New", "PAID": "Paid", "SHIPPED": "Shipped", "DONE": "Done",
             "REFUNDED": "Refunded"}
CHANNEL_ZH = {"WEB": "网站", "APP": "App", "STORE": "门店"}
CHANNEL_EN = {"WEB": "Web", "APP": "App", "STORE": "Store"}
CHANNEL_LABELS = {"WEB": {"zh-CN": "网站", "en": "Web"}, "APP": "App",
                  "STORE": {"zh-CN": "门店", "en": "Store"}}


def lines_definition(**extra):
    d = {"title": "订单明细", "source": "provider", "provider-service": "customer-service",
         "provider-path": "/internal/exports/v1/ORDER_LINES/batches",
         "required-permission": "platform:order:export", "app-scope": "PLATFORM",
         "max-rows": 200000, "max-attempts": 1, "batch-size": 100, "timezone": "Asia/Shanghai",
         "locale": "zh-CN", "sheet-name": {"zh-CN": "订单明细", "en": "Order lines"},
         "totals-label": {"zh-CN": "合计", "en": "Total"},
         "columns": {"channel": {"labels": CHANNEL_LABELS}}}
    d.update(extra)
    return d


def rich_sql_definition(**extra):
    d = {"title": "订单(分组)", "source": "sql-template", "provider-service": "customer-service",
         "query-id": "ORDER_LIST_RICH", "datasource": "replica", "consistency": "lenient",
         "required-permission": "platform:order:export", "app-scope": "PLATFORM",
         "max-rows": 200000, "max-attempts": 1, "batch-size": 100,
         "timezone": "Asia/Shanghai", "locale": "zh-CN", "totals-label": "合计",
         "columns": {"channel": {"labels": CHANNEL_LABELS}},
         "parameters": [{"name": "status", "type": "STRING", "allowed": list(STATUS_ZH)}]}
    d.update(extra)
    return d


STATUS_RULE = {"required-permission": "platform:order:status", "without": "mask",
               "keep-first": 1}


def overrides(cluster_dir, datasource, dialect="sqlite"):
    # A provider type's key is in its path, so the variants (another language,
    # other labels) are sql-template types over the same contract.
    return {
        "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 10},
        "customer-service": {"seed-orders": ORDERS, "replica-dialect": dialect},
        "datasources": {"replica": datasource},
        "definitions": {
            # status: labelled and merged by the service, governed here.
            "ORDER_LINES": lines_definition(columns={
                "channel": {"labels": CHANNEL_LABELS}, "status": STATUS_RULE}),
            "ORDER_LIST_RICH": rich_sql_definition(),
            "ORDER_LIST_RICH_EN": rich_sql_definition(
                locale="en", **{"sheet-name": {"zh-CN": "订单", "en": "Orders"},
                                "totals-label": {"zh-CN": "合计", "en": "Total"}}),
            # STORE has no label and FAIL: the export fails on the first STORE row.
            "ORDER_LIST_RICH_FAIL": rich_sql_definition(columns={
                "channel": {"labels": {"WEB": "网站", "APP": "App"}, "label-missing": "FAIL"}}),
            "ORDER_LIST_RICH_FAIL_GOVERNED": rich_sql_definition(columns={
                "channel": {"labels": {"WEB": "网站", "APP": "App"}, "label-missing": "FAIL",
                            "required-permission": "platform:order:channel",
                            "without": "mask"}}),
        },
    }


# ---- what a correct file holds, from the service's database ---------------------------

def query(db_path, sql, args=()):
    con = sqlite3.connect(db_path)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def day(text):
    y, m, d = (int(x) for x in text.split("-"))
    return datetime.date(y, m, d)


def expected_lines(db_path, tenant):
    """ORDER_LINES' rows, derived as examples/customer-service/order_lines_provider.h
    says: [order_no, date, status, channel, line, sku, quantity, cents]."""
    out = []
    for oid, no, date, status, channel, cents in query(
            db_path, "SELECT id, order_no, order_date, status, channel, amount_cents FROM orders"
            " WHERE tenant_id = ? ORDER BY id", (tenant,)):
        n = 1 + oid % 3
        share = cents // n
        for k in range(1, n + 1):
            line_cents = share if k < n else cents - share * (n - 1)
            out.append([no, day(date), status, channel, k, f"SKU-{(oid * 31 + k * 7) % 500:03d}",
                        1 + (oid + k) % 4, line_cents])
    return out


def expected_rich_orders(db_path, tenant):
    """ORDER_LIST_RICH's rows: [code, date, no, status, channel, paid, quantity, cents]."""
    return [[code, day(date), no, status, channel, bool(paid), qty, cents]
            for code, date, no, status, channel, paid, qty, cents in query(
                db_path, "SELECT customer_code, order_date, order_no, status, channel, paid,"
                " quantity, amount_cents FROM orders WHERE tenant_id = ?"
                " ORDER BY customer_code, order_date, id", (tenant,))]


def column_letter(i):
    return openpyxl.utils.get_column_letter(i + 1)


def run_merges(rows, column, parent, first_row):
    """The merged ranges of `column` (0-based): runs of equal adjacent values,
    ended wherever `parent`'s run of equal values ends (None: no parent), of
    two rows or more, on sheet rows from `first_row`."""
    out, start = [], 0
    for i in range(1, len(rows) + 1):
        ends = (i == len(rows) or rows[i][column] != rows[start][column]
                or (parent is not None and rows[i][parent] != rows[i - 1][parent]))
        if ends:
            if i - start >= 2:
                letter = column_letter(column)
                out.append(f"{letter}{first_row + start}:{letter}{first_row + i - 1}")
            start = i
    return out


def normal(v):
    """A cell as both readers agree on it: empty is None, numbers float, a
    date at midnight its date."""
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, datetime.datetime):
        return v.date() if v.time() == datetime.time(0) else v
    return v


class RichCase(unittest.TestCase):
    """Reading and checking a downloaded file; each class sets cls.c and cls.db."""

    def token(self, user, perms=PERMS, tenant="1"):
        return self.c.token(user, tenant, perms=perms)

    def download(self, token, export_type, parameters=None):
        task, body = self.c.export_file(token, export_type, parameters or {}, "XLSX")
        path = os.path.join(self.c.dir, f"{export_type}-{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(body)
        return path

    def open(self, path):
        wb = openpyxl.load_workbook(path)
        cached = openpyxl.load_workbook(path, data_only=True)
        return wb.worksheets[0], cached.worksheets[0]

    def assert_calamine_reads_as_openpyxl(self, path, cached_sheet):
        sheet = CalamineWorkbook.from_path(path).get_sheet_by_index(0)
        got = [[normal(v) for v in row] for row in sheet.to_python(skip_empty_area=False)]
        want = [[normal(c.value) for c in row] for row in cached_sheet.iter_rows()]
        width = max(len(r) for r in want)
        got = [r + [None] * (width - len(r)) for r in got]
        self.assertEqual(len(got), len(want))
        for n, (g, w) in enumerate(zip(got, want), start=1):
            self.assertEqual(g, w, f"row {n}")
        calamine_merges = sorted(
            f"{column_letter(a[1])}{a[0] + 1}:{column_letter(b[1])}{b[0] + 1}"
            for a, b in sheet.merged_cell_ranges)
        self.assertEqual(calamine_merges,
                         sorted(str(r) for r in cached_sheet.merged_cells.ranges))

    def assert_libreoffice_agrees(self, path, cached_sheet):
        work = path + ".lo"
        os.makedirs(work, exist_ok=True)
        out = subprocess.run(
            ["/usr/bin/python3", os.path.join(REPO, "tests", "render", "recalc_xlsx.py"), path,
             work], check=True, capture_output=True, text=True).stdout
        recalculated = json.loads(out)
        self.assertTrue(recalculated)
        for ref, value in recalculated.items():
            cell = ref.split("!")[-1]
            self.assertEqual(Decimal(str(value)), Decimal(str(cached_sheet[cell].value)), ref)

    def assert_totals(self, sheet, cached, row, label, sums):
        """The totals row `row`: the label in column A, and per column letter a
        SUM formula over the data rows with the exact cached value."""
        self.assertEqual(sheet[f"A{row}"].value, label)
        self.assertTrue(sheet[f"A{row}"].font.b)
        for letter, want in sums.items():
            formula = sheet[f"{letter}{row}"].value
            self.assertEqual(formula, f"=SUM({letter}3:{letter}{row - 1})")
            self.assertEqual(Decimal(str(cached[f"{letter}{row}"].value)), want, letter)

    def assert_highlight(self, sheet, letter, last_row, threshold):
        rules = [(str(cf.sqref), r) for cf in sheet.conditional_formatting for r in cf.rules]
        self.assertEqual(len(rules), 1, rules)
        sqref, rule = rules[0]
        self.assertTrue(sqref.startswith(f"{letter}3:{letter}"), sqref)
        self.assertEqual((rule.type, rule.operator, rule.formula), ("cellIs", "greaterThan",
                                                                     [threshold]))
        self.assertIsNotNone(rule.dxf.fill)


# ---- the provider route, and everything on a SQLite replica --------------------------

class RichOnSqlite(RichCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix="ec-rich-")
        db = os.path.join(cls.c.dir, "customers.db")
        cls.c.write_config(overrides(cls.c.dir, {"kind": "sqlite", "sqlite-path": db}))
        cls.c.start()
        cls.db = db

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def test_provider_file_has_grouped_headers_merges_labels_totals_and_a_highlight(self):
        path = self.download(self.token("lines", FULL), "ORDER_LINES")
        sheet, cached = self.open(path)
        want = expected_lines(self.db, "1")
        self.assertGreater(len(want), 360)
        self.assertEqual(sheet.title, "订单明细")
        self.assertEqual(sheet.freeze_panes, "A3")
        self.assertEqual([c.value for c in sheet[1]],
                         ["订单", None, None, "渠道", "明细", None, None, None])
        self.assertEqual([c.value for c in sheet[2]],
                         ["订单号", "下单日期", "状态", None, "行号", "商品", "数量", "金额"])
        merges = sorted(str(r) for r in sheet.merged_cells.ranges)
        header = ["A1:C1", "D1:D2", "E1:H1"]
        data = (run_merges(want, 0, None, 3) + run_merges(want, 1, 0, 3)
                + run_merges(want, 2, 0, 3))  # status: merged within the order too
        self.assertEqual(merges, sorted(header + data))
        self.assertGreater(len(data), 300)
        # Cells: only a run's first row holds the merged value; labels in place of codes.
        for n, w in enumerate(want):
            row = [c.value for c in sheet[n + 3]]
            if n == 0 or want[n - 1][0] != w[0]:  # an order's first line
                self.assertEqual(row[0], w[0], n)
                self.assertEqual(row[1].date(), w[1], n)
                self.assertEqual(row[2], STATUS_ZH[w[2]], n)
            else:
                self.assertEqual(row[0:3], [None, None, None], n)
            self.assertEqual(row[3], CHANNEL_ZH[w[3]], n)
            self.assertEqual(row[4:7], w[4:7], n)
            self.assertEqual(Decimal(str(row[7])).quantize(Decimal("0.01")),
                             Decimal(w[7]) / 100, n)
        total_row = len(want) + 3
        self.assertEqual(sheet.max_row, total_row)
        self.assert_totals(sheet, cached, total_row, "合计", {
            "G": Decimal(sum(w[6] for w in want)),
            "H": Decimal(sum(w[7] for w in want)) / 100})
        self.assert_highlight(sheet, "H", total_row - 1, "30000")
        self.assertEqual(sheet["A1"].fill.fgColor.rgb, "FFDDEBF7")
        self.assert_calamine_reads_as_openpyxl(path, cached)
        self.assert_libreoffice_agrees(path, cached)

    def test_the_definitions_locale_picks_titles_labels_sheet_name_and_totals_label(self):
        path = self.download(self.token("rich-en"), "ORDER_LIST_RICH_EN")
        sheet, _ = self.open(path)
        want = expected_rich_orders(self.db, "1")
        self.assertEqual(sheet.title, "Orders")
        self.assertEqual([c.value for c in sheet[1]][:5], ["客户", "订单", None, "Order", "订单"])
        self.assertEqual(sheet["D2"].value, "Status")
        self.assertEqual([sheet[f"D{n + 3}"].value for n in range(len(want))],
                         [STATUS_EN[w[3]] for w in want])
        self.assertEqual([sheet[f"E{n + 3}"].value for n in range(len(want))],
                         [CHANNEL_EN[w[4]] for w in want])
        self.assertEqual(sheet[f"A{len(want) + 3}"].value, "Total")

    def english_titles_and_labels(self, path):
        sheet, _ = self.open(path)
        want = expected_rich_orders(self.db, "1")
        self.assertEqual(sheet["D2"].value, "Status")
        self.assertEqual([sheet[f"D{n + 3}"].value for n in range(len(want))],
                         [STATUS_EN[w[3]] for w in want])

    def created_in(self, token, export_type, body_locale=None, accept_language=None):
        body = {"exportType": export_type, "parameters": {}, "format": "XLSX"}
        if body_locale:
            body["locale"] = body_locale
        headers = {"Accept-Language": accept_language} if accept_language else None
        created = self.c.api("POST", "/export-tasks", token, body, headers=headers).json()
        self.assertEqual(created["code"], "200", created)
        return self.c.wait_task(token, created["data"]["id"], states=ENDED)

    def fetch(self, token, task):
        self.assertEqual(task["status"], "SUCCEEDED", task)
        r = self.c.api("GET", f"/export-tasks/{task['id']}/download", token)
        self.assertEqual(r.status, 200)
        path = os.path.join(self.c.dir, f"locale-{task['id']}-{task['dispatchVersion']}.xlsx")
        with open(path, "wb") as f:
            f.write(r.body)
        return path

    def test_the_requesters_locale_picks_the_files_language_on_every_attempt(self):
        # ORDER_LIST_RICH's default language is zh-CN; the requester's wins.
        token = self.token("rich-locale")
        by_body = self.created_in(token, "ORDER_LIST_RICH", body_locale="en")
        self.assertEqual(by_body["locale"], "en")
        self.english_titles_and_labels(self.fetch(token, by_body))
        by_header = self.created_in(token, "ORDER_LIST_RICH", accept_language="en-US,zh;q=0.5")
        self.assertEqual(by_header["locale"], "en-US")
        self.english_titles_and_labels(self.fetch(token, by_header))
        # A retry writes the same language: fail the finished task, retry it by hand, and
        # the new attempt (another process might serve it) reads the recorded locale.
        self.c.db().execute("UPDATE export_task SET status = 'FAILED', failure_code ="
                            " 'PROVIDER_ERROR', object_key = NULL WHERE id = ?",
                            (int(by_body["id"]),))
        retried = self.c.api("POST", f"/export-tasks/{by_body['id']}/retry", token).json()
        self.assertEqual(retried["code"], "200", retried)
        again = self.c.wait_task(token, by_body["id"], states=ENDED)
        self.assertGreater(again["dispatchVersion"], by_body["dispatchVersion"])
        self.assertEqual(again["locale"], "en")
        self.english_titles_and_labels(self.fetch(token, again))
        default = self.created_in(token, "ORDER_LIST_RICH")
        sheet, _ = self.open(self.fetch(token, default))
        self.assertEqual(sheet["D2"].value, "状态")

    def test_preview_shows_the_labels_of_the_file(self):
        p = self.c.api("POST", "/export-previews", self.token("preview", FULL),
                       {"exportType": "ORDER_LINES", "parameters": {}, "format": "XLSX"}).json()
        self.assertEqual(p["code"], "200", p)
        want = expected_lines(self.db, "1")[:len(p["data"]["rows"])]
        self.assertGreater(len(want), 0)
        for row, w in zip(p["data"]["rows"], want):
            self.assertEqual(row[2], STATUS_ZH[w[2]])
            self.assertEqual(row[3], CHANNEL_ZH[w[3]])

    def test_a_governed_labelled_merged_column_is_masked_and_merged_as_before(self):
        plain, _ = self.open(self.download(self.token("gov-full", FULL), "ORDER_LINES"))
        path = self.download(self.token("gov-masked"), "ORDER_LINES")
        masked, cached = self.open(path)
        want = expected_lines(self.db, "1")
        self.assertEqual(sorted(str(r) for r in masked.merged_cells.ranges),
                         sorted(str(r) for r in plain.merged_cells.ranges))
        for n, w in enumerate(want):
            label = STATUS_ZH[w[2]]
            got_plain, got_masked = plain[f"C{n + 3}"].value, masked[f"C{n + 3}"].value
            if n == 0 or want[n - 1][0] != w[0]:
                self.assertEqual(got_plain, label, n)
                self.assertEqual(got_masked, label[0] + "*" * (len(label) - 1), n)
            else:
                self.assertEqual((got_plain, got_masked), (None, None), n)
        self.assertFalse({c.value for c in masked["C"]} & (set(STATUS_ZH) | set(STATUS_ZH.values())))
        self.assert_calamine_reads_as_openpyxl(path, cached)
        p = self.c.api("POST", "/export-previews", self.token("gov-preview"),
                       {"exportType": "ORDER_LINES", "parameters": {}}).json()
        self.assertEqual(p["code"], "200", p)
        self.assertEqual(p["data"]["rows"][0][2], masked["C3"].value)

    def test_a_value_without_a_label_fails_and_a_governed_one_is_not_quoted(self):
        want = expected_rich_orders(self.db, "1")
        first_store = next(n for n, w in enumerate(want) if w[4] == "STORE") + 1
        for export_type, quoted in (("ORDER_LIST_RICH_FAIL", True),
                                    ("ORDER_LIST_RICH_FAIL_GOVERNED", False)):
            token = self.token(f"fail-{quoted}")
            created = self.c.create(token, export_type=export_type, parameters={}, fmt="XLSX")
            self.assertEqual(created["code"], "200", created)
            task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
            self.assertEqual(task["status"], "FAILED", task)
            message = task["failureMessage"]
            self.assertIn(f"row {first_store}, column 'channel'", message)
            self.assertEqual("STORE" in message, quoted, message)

    def test_sql_route_on_sqlite(self):
        self.check_rich_sql_file(libreoffice=True)

    def check_rich_sql_file(self, libreoffice=False):
        path = self.download(self.token(f"sql-{type(self).__name__}"), "ORDER_LIST_RICH")
        sheet, cached = self.open(path)
        want = expected_rich_orders(self.db, "1")
        self.assertGreater(len(want), 100)  # more than one page
        self.assertEqual([c.value for c in sheet[1]],
                         ["客户", "订单", None, None, None, None, "金额", None])
        self.assertEqual([c.value for c in sheet[2]],
                         ["客户编码", "下单日期", "订单号", "状态", "渠道", "已支付", "数量", "金额"])
        merges = sorted(str(r) for r in sheet.merged_cells.ranges)
        data = run_merges(want, 0, None, 3) + run_merges(want, 1, 0, 3)
        self.assertGreater(len(data), 50)
        self.assertEqual(merges, sorted(["B1:F1", "G1:H1"] + data))
        for n, w in enumerate(want):
            row = [c.value for c in sheet[n + 3]]
            self.assertEqual(row[2:6], [w[2], STATUS_ZH[w[3]], CHANNEL_ZH[w[4]],
                                        "是" if w[5] else "否"], n)
        total_row = len(want) + 3
        self.assert_totals(sheet, cached, total_row, "合计", {
            "G": Decimal(sum(w[6] for w in want)),
            "H": Decimal(sum(w[7] for w in want)) / 100})
        self.assert_highlight(sheet, "H", total_row - 1, "90000")
        self.assert_calamine_reads_as_openpyxl(path, cached)
        if libreoffice:
            self.assert_libreoffice_agrees(path, cached)


class ReplicaRich:
    """ORDER_LIST_RICH on a replica of kind KIND: its template in the
    replica's dialect, the center's only datasource the replica."""

    KIND = None

    @classmethod
    def setUpClass(cls):
        cls.replica = Replica(cls.KIND)
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix=f"ec-rich-{cls.KIND}-")
        try:
            cls.replica.start()
            cls.c.write_config(overrides(cls.c.dir, cls.replica.datasource(),
                                         cls.replica.dialect))
            cls.c.start_provider()
            cls.db = os.path.join(cls.c.dir, "customers.db")
            cls.replica.load(cls.db)
            cls.c.start_center()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()
        cls.replica.stop()

    def test_sql_route_on_the_replica(self):
        self.check_rich_sql_file()


class RichOnPostgres(ReplicaRich, RichCase):
    KIND = "postgres"
    check_rich_sql_file = RichOnSqlite.check_rich_sql_file


class RichOnMariaDb(ReplicaRich, RichCase):
    KIND = "mariadb"
    check_rich_sql_file = RichOnSqlite.check_rich_sql_file


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
