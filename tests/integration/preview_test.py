"""POST /export-previews end to end (docs/http-api.md#post-export-previews--preview): the
built export-center and customer-service binaries, both data routes.

- the preview's rows equal the first rows of the real export's file, read back
  with python's csv module, for a provider type (CUSTOMER_LIST) and a
  sql-template type (ORDER_LIST), with the exact count on the SQL route and
  "at least" on the provider route;
- the tenant comes from the token only: another tenant's token previews its
  own rows, and a body or parameter naming a tenant is refused;
- a hostile template (`${}` over a free-text parameter) is refused with the
  export's own failure code and message;
- a count over the type's max-rows answers exceedsMaxRows with the options
  the type allows, before anything is queued;
- the per-user rate limit answers 429; a hanging provider a clear error
  within the time limit, and the next preview works; previews past
  preview.max-running answer 429 until the hanging reads end;
- no task row and no file appear after previews;
- the sql-template cases once more on a real PostgreSQL and a real MariaDB
  replica (replica.py: a copy of the service's tables, its template written
  for that database): rows equal to the CSV and XLSX files' first rows, the
  exact count past the first page, tenant isolation, the hostile template.

Run: /usr/bin/python3 preview_test.py BUILD_DIR [-k NAME]
"""
import csv
import io
import os
import sys
import threading
import time
import unittest

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
import customer_data  # noqa: E402
from harness import ENDED, Cluster  # noqa: E402
from order_list_test import expected_orders, order_definition, order_overrides  # noqa: E402
from replica import Replica  # noqa: E402

BUILD_DIR = None
PERMS = ("platform:customer:export", "platform:order:export")
PER_MINUTE = 6
TIMEOUT_SECONDS = 3
MAX_RUNNING = 2
ATTACK = ("x%' UNION SELECT id, order_no, customer_code, status, channel, 0, 0, 0,"
          " order_date, created_at FROM orders WHERE '%' = '")


def as_text(value, kind):
    """An XLSX cell as the preview shows it (docs/http-api.md#post-export-previews--preview)."""
    if value is None:
        return ""
    if kind == "BOOLEAN":
        return "TRUE" if value else "FALSE"
    if kind == "DECIMAL":
        return f"{value:.2f}"  # the sample's DECIMAL columns have scale 2
    if kind == "DATE":
        return value.strftime("%Y-%m-%d")
    if kind == "DATETIME":
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def preview_overrides(cluster_dir):
    over = order_overrides(cluster_dir)
    small = order_definition("ORDER_LIST", "strict")
    small["max-rows"] = 100
    split = dict(small, split="files")
    split["rows-per-file"] = 50
    spliced = order_definition("ORDER_LIST_SPLICED_KEYWORD", "strict")
    over["definitions"].update({"ORDER_LIST_SMALL": small, "ORDER_LIST_SMALL_SPLIT": split,
                                "ORDER_SPLICED_KEYWORD": spliced})
    over["preview"] = {"per-user-per-minute": PER_MINUTE, "timeout-seconds": TIMEOUT_SECONDS,
                       "max-running": MAX_RUNNING}
    return over


class PreviewCase(unittest.TestCase):
    """Calls and checks shared by the test classes; each sets cls.c (a started
    Cluster) and cls.db (the service's SQLite file)."""

    def token(self, user, tenant="1"):
        return self.c.token(user, tenant, perms=PERMS)

    def preview(self, token, export_type, parameters=None, fmt=None, body=None):
        if body is None:
            body = {"exportType": export_type, "parameters": parameters or {}}
            if fmt:
                body["format"] = fmt
        return self.c.api("POST", "/export-previews", token, body).json()

    def export_csv_rows(self, token, export_type, parameters):
        _, body = self.c.export_file(token, export_type, parameters, "CSV")
        return list(csv.reader(io.StringIO(body.decode("utf-8-sig"), newline="")))

    def assert_preview_matches_export(self, token, export_type, parameters):
        p = self.preview(token, export_type, parameters, fmt="CSV")
        self.assertEqual(p["code"], "200", p)
        data = p["data"]
        rows = self.export_csv_rows(token, export_type, parameters)
        self.assertEqual([c["title"] for c in data["columns"]], rows[0])
        self.assertEqual(len(data["rows"]), min(20, len(rows) - 1))
        self.assertEqual(data["rows"], rows[1:21])
        return data, rows

    def export_xlsx_rows(self, token, export_type, parameters, width):
        """The XLSX file's title row and first 20 rows, each padded to `width`
        cells (openpyxl ends a row at its last non-empty cell)."""
        task, body = self.c.export_file(token, export_type, parameters, "XLSX")
        path = os.path.join(self.c.dir, f"{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(body)
        sheet = openpyxl.load_workbook(path, read_only=True).worksheets[0]
        return [list(row) + [None] * (width - len(row))
                for row in sheet.iter_rows(values_only=True, max_row=21)]

    def assert_xlsx_preview_matches_export(self, token, export_type, parameters):
        p = self.preview(token, export_type, parameters, fmt="XLSX")
        self.assertEqual(p["code"], "200", p)
        data = p["data"]
        kinds = [c["type"] for c in data["columns"]]
        rows = self.export_xlsx_rows(token, export_type, parameters, len(kinds))
        self.assertEqual([c["title"] for c in data["columns"]], rows[0])
        self.assertEqual(data["rows"], [[as_text(v, k) for v, k in zip(row, kinds)]
                                        for row in rows[1:]])
        return data, rows

    def assert_hostile_template_refused_as_in_an_export(self, token, export_type):
        p = self.preview(token, export_type, {"keyword": ATTACK})
        self.assertEqual(p["code"], "400", p)
        self.assertTrue(p["message"].startswith("UNSAFE_TEMPLATE: "), p)
        self.assertIn("${keyword}", p["message"])
        self.assertNotIn("UNION", p["message"])
        created = self.c.create(token, export_type=export_type, parameters={"keyword": ATTACK})
        task = self.c.wait_task(token, created["data"]["id"], states=ENDED)
        self.assertEqual(task["failureCode"], "UNSAFE_TEMPLATE", task)
        self.assertEqual(p["message"], "UNSAFE_TEMPLATE: " + task["failureMessage"])



class Preview(PreviewCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=3000, prefix="ec-preview-")
        cls.c.write_config(preview_overrides(cls.c.dir))
        cls.c.start()
        cls.db = os.path.join(cls.c.dir, "customers.db")

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def wait_until_no_preview_runs(self):
        """A read an earlier test left hanging holds its slot until its capped
        client timeout ends: wait until MAX_RUNNING previews at once all get one."""
        tokens = [self.token(f"probe-{n}") for n in range(MAX_RUNNING)]
        for _ in range(PER_MINUTE):
            codes = []
            threads = [threading.Thread(target=lambda t=t: codes.append(
                self.preview(t, "CUSTOMER_LIST", {"keyword": "柏悦"})["code"])) for t in tokens]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if codes == ["200"] * MAX_RUNNING:
                return
            time.sleep(1)
        self.fail("preview slots stayed busy")

    # ---- the rows are the file's --------------------------------------------------

    def test_provider_preview_rows_equal_the_first_rows_of_the_export(self):
        token = self.token("match-provider")
        data, rows = self.assert_preview_matches_export(token, "CUSTOMER_LIST", {})
        self.assertEqual(data["exportType"], "CUSTOMER_LIST")
        self.assertEqual([c["type"] for c in data["columns"]], customer_data.KINDS)
        # More than one batch: the provider only says how many came first.
        self.assertEqual(data["rowCount"], {"value": "500", "exact": False})
        self.assertGreater(len(rows) - 1, 500)
        self.assertEqual(data["maxRows"], "200000")
        self.assertFalse(data["exceedsMaxRows"])
        self.assertEqual(data["suggestions"], [])
        # One batch is the whole export: then the count is exact.
        few, few_rows = self.assert_preview_matches_export(token, "CUSTOMER_LIST",
                                                           {"keyword": "柏悦"})
        self.assertEqual(few["rowCount"], {"value": str(len(few_rows) - 1), "exact": True})

    def test_xlsx_preview_is_the_xlsx_file_as_text(self):
        token = self.token("xlsx")
        data, _ = self.assert_xlsx_preview_matches_export(token, "CUSTOMER_LIST", {})
        # The sample's hostile remarks are among the first rows: guarded, as in the file.
        remarks = [row[9] for row in data["rows"]]
        self.assertIn("'=HYPERLINK(\"http://example.invalid\",\"点我\")", remarks)

    def test_sql_template_preview_rows_equal_the_first_rows_of_the_export(self):
        token = self.token("match-sql")
        data, rows = self.assert_preview_matches_export(token, "ORDER_LIST", {"status": "PAID"})
        self.assertEqual(data["rowCount"], {"value": str(len(rows) - 1), "exact": True})
        self.assertGreater(len(rows) - 1, 20)

    # ---- authorization and input --------------------------------------------------------

    def test_another_tenants_data_is_impossible(self):
        mine = self.preview(self.token("t2-user", tenant="2"), "CUSTOMER_LIST", {})
        self.assertEqual(mine["code"], "200", mine)
        want = customer_data.expected_rows(self.db, "2", {})[:20]
        self.assertEqual([r[0] for r in mine["data"]["rows"]], [str(w[0]) for w in want])
        tenant1_ids = {str(w[0]) for w in customer_data.expected_rows(self.db, "1", {})}
        self.assertFalse(tenant1_ids & {r[0] for r in mine["data"]["rows"]})
        # The sql-template route binds #{tenantId} from the token too.
        orders = self.preview(self.token("t2-orders", tenant="2"), "ORDER_LIST", {})
        self.assertEqual(orders["code"], "200", orders)
        want = expected_orders(self.db, "2", {})
        self.assertEqual([r[0] for r in orders["data"]["rows"]], [str(w[0]) for w in want[:20]])
        self.assertEqual(orders["data"]["rowCount"], {"value": str(len(want)), "exact": True})
        token = self.token("t2-forger", tenant="2")
        forged = self.preview(token, None, body={"exportType": "CUSTOMER_LIST", "tenantId": "1"})
        self.assertEqual(forged["code"], "400", forged)
        forged = self.preview(token, "ORDER_LIST", {"tenantId": "1"})
        self.assertEqual(forged["code"], "400", forged)
        self.assertEqual(self.c.api("POST", "/export-previews", None,
                                    {"exportType": "CUSTOMER_LIST"}).json()["code"], "401")
        no_perm = self.c.token("noperm", "1", perms=("platform:customer:export",))
        self.assertEqual(self.preview(no_perm, "ORDER_LIST")["code"], "403")

    def test_hostile_template_is_refused_the_same_way_as_an_export(self):
        self.assert_hostile_template_refused_as_in_an_export(self.token("hostile"),
                                                             "ORDER_SPLICED_KEYWORD")

    def test_count_over_max_rows_says_so_with_the_allowed_options(self):
        token = self.token("big")
        p = self.preview(token, "ORDER_LIST_SMALL", {}, fmt="XLSX")
        self.assertEqual(p["code"], "200", p)
        data = p["data"]
        self.assertGreater(int(data["rowCount"]["value"]), 100)
        self.assertTrue(data["rowCount"]["exact"])
        self.assertEqual(data["maxRows"], "100")
        self.assertTrue(data["exceedsMaxRows"])
        self.assertEqual(data["suggestions"], ["CSV"])
        self.assertEqual(len(data["rows"]), 20)
        split = self.preview(token, "ORDER_LIST_SMALL_SPLIT", {}, fmt="XLSX")["data"]
        self.assertEqual(split["suggestions"], ["CSV", "SPLIT"])
        as_csv = self.preview(token, "ORDER_LIST_SMALL_SPLIT", {}, fmt="CSV")["data"]
        self.assertEqual(as_csv["suggestions"], ["SPLIT"])
        under = self.preview(token, "ORDER_LIST_SMALL", {"status": "PAID", "channel": "WEB",
                                                         "keyword": "SO00001"})["data"]
        self.assertFalse(under["exceedsMaxRows"], under["rowCount"])
        self.assertEqual(under["suggestions"], [])

    # ---- limits, time, side effects ---------------------------------------------------

    def test_rate_limit_answers_429_per_user(self):
        token = self.token("rate")
        codes = [self.preview(token, "CUSTOMER_LIST", {"keyword": "柏悦"})["code"]
                 for _ in range(PER_MINUTE)]
        self.assertEqual(codes, ["200"] * PER_MINUTE)
        over = self.preview(token, "CUSTOMER_LIST", {"keyword": "柏悦"})
        self.assertEqual(over["code"], "429", over)
        self.assertIn(f"at most {PER_MINUTE} a minute", over["message"])
        other = self.preview(self.token("rate-other"), "CUSTOMER_LIST", {"keyword": "柏悦"})
        self.assertEqual(other["code"], "200", other)

    def test_hanging_provider_gives_a_clear_error_within_the_time_limit(self):
        token = self.token("slow")
        self.c.faults(hangMs=(TIMEOUT_SECONDS + 3) * 1000, hangCount=1)
        start = time.monotonic()
        p = self.preview(token, "CUSTOMER_LIST", {})
        elapsed = time.monotonic() - start
        self.assertEqual(p["code"], "500", p)
        self.assertIn(f"did not finish within {TIMEOUT_SECONDS} s", p["message"])
        self.assertLess(elapsed, TIMEOUT_SECONDS + 1.5)
        self.assertGreaterEqual(elapsed, TIMEOUT_SECONDS - 0.2)
        ok = self.preview(token, "CUSTOMER_LIST", {"keyword": "柏悦"})
        self.assertEqual(ok["code"], "200", ok)
        time.sleep(1.5)  # the hanging read ends at its capped timeout (limit + 1 s): no slot held

    def test_previews_past_max_running_answer_429_until_their_reads_end(self):
        tokens = [self.token(f"busy-{n}") for n in range(MAX_RUNNING + 1)]
        self.wait_until_no_preview_runs()
        self.c.faults(hangMs=(TIMEOUT_SECONDS + 3) * 1000, hangCount=MAX_RUNNING)
        answers = []

        def slow(token):
            answers.append(self.preview(token, "CUSTOMER_LIST", {})["code"])

        threads = [threading.Thread(target=slow, args=(t,)) for t in tokens[:MAX_RUNNING]]
        for t in threads:
            t.start()
        time.sleep(1)  # both are reading from the hanging provider now
        busy = self.preview(tokens[-1], "CUSTOMER_LIST", {"keyword": "柏悦"})
        self.assertEqual(busy["code"], "429", busy)
        self.assertIn("too many previews are running", busy["message"])
        for t in threads:
            t.join()
        self.assertEqual(answers, ["500"] * MAX_RUNNING)
        # The reads are capped at the preview's time limit + 1 s: the slots are free again.
        time.sleep(2)
        again = self.preview(tokens[-1], "CUSTOMER_LIST", {"keyword": "柏悦"})
        self.assertEqual(again["code"], "200", again)

    def test_previews_create_no_task_and_no_file(self):
        token = self.token("no-trace")
        files = self.c.stored_files()
        for export_type in ("CUSTOMER_LIST", "ORDER_LIST", "ORDER_LIST_SMALL"):
            for fmt in ("XLSX", "CSV"):
                p = self.preview(token, export_type, {}, fmt=fmt)  # 6: within PER_MINUTE
                self.assertEqual(p["code"], "200", p)
        rows = self.c.db().query("SELECT COUNT(*) AS n FROM export_task WHERE requested_by = ?",
                                 ("no-trace",))
        self.assertEqual(rows[0]["n"], 0)
        self.assertEqual(self.c.db().query("SELECT COUNT(*) AS n FROM export_outbox o JOIN"
                                           " export_task t ON t.id = o.task_id WHERE"
                                           " t.requested_by = ?", ("no-trace",))[0]["n"], 0)
        self.assertEqual(self.c.stored_files(), files)
        listed = self.c.api("GET", "/export-tasks", token).json()
        self.assertEqual(listed["data"]["total"], "0", listed)


# ---- the sql-template route on a PostgreSQL and a MariaDB replica ---------------------

REPLICA_CUSTOMERS = 300
REPLICA_ORDERS = 600  # tenant 1 holds 360 of them, tenant 2 240
REPLICA_BATCH = 100  # pages of 100: a preview's count past the first page is the COUNT(*)


def replica_overrides(cluster_dir, replica):
    """The service writes its ORDER_LIST template for the replica's dialect, and
    the center's only datasource is the replica: no SQL of these types can run
    on the service's SQLite file."""
    over = order_overrides(cluster_dir, **{"customer-service": {
        "seed-orders": REPLICA_ORDERS, "replica-dialect": replica.dialect}})
    over["datasources"] = {"replica": replica.datasource()}
    for name in ("ORDER_LIST", "ORDER_LIST_SQL"):
        over["definitions"][name]["batch-size"] = REPLICA_BATCH
    over["definitions"]["ORDER_SPLICED_KEYWORD"] = order_definition(
        "ORDER_LIST_SPLICED_KEYWORD", "strict")
    return over


class ReplicaPreviewTests:
    """The sql-template cases of Preview on a replica of kind KIND (a
    subclass sets it): one server and one cluster for the class."""

    KIND = None

    @classmethod
    def setUpClass(cls):
        cls.replica = Replica(cls.KIND)
        cls.c = Cluster(BUILD_DIR, seed=REPLICA_CUSTOMERS, prefix=f"ec-preview-{cls.KIND}-")
        try:
            cls.replica.start()
            cls.c.write_config(replica_overrides(cls.c.dir, cls.replica))
            cls.c.start_provider()  # seeds the service's SQLite file, copied next
            cls.db = os.path.join(cls.c.dir, "customers.db")
            cls.replica.load(cls.db)
            cls.c.start_center()
        except BaseException:
            cls.tearDownClass()  # unittest does not call it when setUpClass fails
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()
        cls.replica.stop()

    def token(self, user, tenant="1"):
        return super().token(f"{self.KIND}-{user}", tenant)

    def test_rows_equal_the_first_rows_of_the_csv_and_xlsx_files(self):
        token = self.token("match")
        want = len(expected_orders(self.db, "1", {}))
        self.assertGreater(want, REPLICA_BATCH)
        for export_type in ("ORDER_LIST", "ORDER_LIST_SQL"):  # enriched by callback, by SQL
            data, rows = self.assert_preview_matches_export(token, export_type, {})
            self.assertEqual(len(rows) - 1, want, export_type)
            # More than one page: the count is the replica's COUNT(*), exact.
            self.assertEqual(data["rowCount"], {"value": str(want), "exact": True}, export_type)
            self.assertTrue(all(row[3] for row in data["rows"]), "a blank customer_name")
            xlsx, _ = self.assert_xlsx_preview_matches_export(token, export_type, {})
            self.assertEqual(xlsx["rowCount"], data["rowCount"], export_type)

    def test_filters_in_the_replicas_dialect_count_exactly(self):
        token = self.token("filters")
        params = {"status": "PAID", "keyword": "SO00000001"}  # strpos / instr on the replica
        data, rows = self.assert_preview_matches_export(token, "ORDER_LIST", params)
        want = expected_orders(self.db, "1", params)
        self.assertGreater(len(want), 0)
        self.assertEqual(len(rows) - 1, len(want))
        self.assertEqual(data["rowCount"], {"value": str(len(want)), "exact": True})

    def test_another_tenants_data_is_impossible(self):
        token = self.token("t2", tenant="2")
        want = expected_orders(self.db, "2", {})
        for export_type in ("ORDER_LIST", "ORDER_LIST_SQL"):
            p = self.preview(token, export_type, {})
            self.assertEqual(p["code"], "200", p)
            ids = [row[0] for row in p["data"]["rows"]]
            self.assertEqual(ids, [str(w[0]) for w in want[:20]], export_type)
            self.assertEqual(p["data"]["rowCount"], {"value": str(len(want)), "exact": True})
            tenant1_ids = {str(w[0]) for w in expected_orders(self.db, "1", {})}
            self.assertFalse(tenant1_ids & set(ids), export_type)
        forged = self.preview(token, "ORDER_LIST", {"tenantId": "1"})
        self.assertEqual(forged["code"], "400", forged)

    def test_hostile_template_is_refused_the_same_way_as_an_export(self):
        self.assert_hostile_template_refused_as_in_an_export(self.token("hostile"),
                                                             "ORDER_SPLICED_KEYWORD")


class PreviewOnPostgres(ReplicaPreviewTests, PreviewCase):
    KIND = "postgres"


class PreviewOnMariaDb(ReplicaPreviewTests, PreviewCase):
    KIND = "mariadb"


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
