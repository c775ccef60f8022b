"""The Java SDK end to end (docs/java-sdk.md): the built export-center and the
Java sample service examples/order-service-java (Spring Boot + MyBatis on the
export-center starter), each with its own SQLite database seeded on first start.

- CUSTOMER_LIST (provider route) and ORDER_LIST / ORDER_LIST_SQL (sql-template
  route, enrichment by callback and by SQL) and ORDER_LIST_MP (the MyBatis-Plus
  list page's own wrapper as the template, its columns from a DTO) exported by
  the center from the Java service, which runs below a servlet context path with
  the starter's base path (base-url carries both); `export-center check` asks each
  type and queryId with the token and fails on a wrong token or an unserved one; every cell equals the service's own data read straight from its
  database with sqlite3 (Chinese text, decimals, dates, datetimes, nulls,
  formula-like and emoji remarks);
- the C++ sample (examples/customer-service, C++ SDK) and the Java sample seed
  the same rows and answer the same contract requests with the same bytes:
  every CUSTOMER_LIST batch of both tenants, the refusals (401, 403, 404, 400),
  /dispatch/count, /version, /enrich, and /dispatch/sql — whose templates differ
  in text (the Java one is the service's mapper statement) but render to the
  same SQL and bindings through `export-center sql render`;
- the service's own list page counts what /dispatch/count counts (one origin);
- ORDER_RICH (issue 45): the center's file of the sample's rich DTO has the header cells,
  merged ranges and labels of the file EasyExcel writes from the same DTO and rows.

Needs the jar built by scripts/build-java.sh (scripts/build.sh runs it).
Run: /usr/bin/python3 order_service_java_test.py BUILD_DIR [-k NAME]
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import openpyxl
import yaml

sys.path.insert(0, os.path.dirname(__file__))
from customer_data import TITLES as CUSTOMER_TITLES  # noqa: E402
from customer_data import expected_rows, same_cell  # noqa: E402
from harness import Cluster, free_port, request  # noqa: E402
from order_list_test import TITLES as ORDER_TITLES  # noqa: E402
from order_list_test import expected_orders, order_definition  # noqa: E402

BUILD_DIR = None
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JAR = os.path.join(ROOT, "examples", "order-service-java", "target", "order-service-java.jar")
CUSTOMERS = 2000
ORDERS = 3000
TOKEN = "e2e-internal-token"
SECRET = "e2e-snapshot-secret-0123456789abcdef"


def service_section(port, db):
    return {"host": "127.0.0.1", "port": port, "sqlite-path": db, "internal-token": TOKEN,
            "snapshot-secret": SECRET, "seed-customers": CUSTOMERS, "seed-orders": ORDERS,
            "contract-version": 1}


class Service:
    """A sample service process started with its own config file; the address
    comes from its "listening on" line. Stopped by its own pid."""

    def __init__(self, argv, log_path, timeout=240):
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log)
        self.base = None
        found = {}

        def read_first_lines():
            for raw in self.proc.stdout:
                m = re.search(r"listening on (http://[0-9.]+:[0-9]+)", raw.decode("utf-8", "replace"))
                if m:
                    found["base"] = m.group(1)
                    return

        reader = threading.Thread(target=read_first_lines, daemon=True)
        reader.start()
        reader.join(timeout)
        if "base" not in found:
            self.stop()
            raise RuntimeError(f"{argv[0]} did not start listening in {timeout}s (see {log_path})")
        self.base = found["base"]

    def post(self, path, body=None, token=TOKEN, raw=None):
        headers = {"X-Internal-Service-Token": token} if token is not None else {}
        if body is not None:
            raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
        return request("POST", self.base + path, raw=raw, headers=headers)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()


def start_java(config_path, log_path, spring_args=()):
    if not os.path.exists(JAR):
        raise AssertionError(f"{JAR} is missing: run scripts/build-java.sh (scripts/build.sh does)")
    return Service(["java", "-jar", JAR, "--config", config_path, *spring_args], log_path)


# The center's service runs below a servlet context path, its contracts below
# the starter's base path: base-url carries both (docs/java-sdk.md).
CONTEXT_PATH = "/orders"
BASE_PATH = "/export"


def wrapper_definition():
    """ORDER_LIST_MP reads orderNoPrefix (the MyBatis-Plus page's likeRight) where the other
    order types read keyword: its definition says so, as its paramSchema does."""
    d = order_definition("ORDER_LIST_MP", "strict")
    d["parameters"] = [p for p in d["parameters"] if p["name"] != "keyword"] + [
        {"name": "orderNoPrefix", "type": "STRING"}]
    return d


def write_yaml(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, allow_unicode=True, sort_keys=False)
    return path


class JavaServiceExports(unittest.TestCase):
    """The center exporting from the Java service on both routes."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix="ec-java-")
        cls.db = os.path.join(cls.c.dir, "java.db")
        port = free_port()
        cls.c.write_config({
            "customer-service": None,  # the C++ sample is not started here
            "order-service": service_section(port, cls.db),
            "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 10},
            "provider-services": {"customer-service": {
                "base-url": f"http://127.0.0.1:{port}{CONTEXT_PATH}{BASE_PATH}",
                "internal-token": TOKEN}},
            "datasources": {"replica": {"kind": "sqlite", "sqlite-path": cls.db}},
            "definitions": {"ORDER_LIST": order_definition("ORDER_LIST", "strict"),
                            "ORDER_LIST_SQL": order_definition("ORDER_LIST_SQL", "strict"),
                            # The MyBatis-Plus list page's wrapper, columns from a DTO.
                            "ORDER_LIST_MP": wrapper_definition()},
        })
        try:
            cls.java = start_java(cls.c.config, os.path.join(cls.c.dir, "java.log"),
                                  [f"--server.servlet.context-path={CONTEXT_PATH}",
                                   f"--export-center.sdk.base-path={BASE_PATH}"])
            cls.c.start_center()
        except BaseException:
            cls.c.cleanup()
            raise
        cls.t1 = cls.c.token("j1", "1", perms=("platform:customer:export", "platform:order:export"))
        cls.t2 = cls.c.token("j2", "2", perms=("platform:customer:export", "platform:order:export"))

    @classmethod
    def tearDownClass(cls):
        cls.java.stop()
        cls.c.cleanup()

    def export_rows(self, token, export_type, params, titles):
        task, body = self.c.export_file(token, export_type, params, "XLSX")
        path = os.path.join(self.c.dir, f"{task['id']}.xlsx")
        with open(path, "wb") as f:
            f.write(body)
        rows = list(openpyxl.load_workbook(path, read_only=True).worksheets[0]
                    .iter_rows(values_only=True))
        self.assertEqual(list(rows[0]), titles)
        # openpyxl's read-only rows end at the last non-empty cell.
        return task, [list(row) + [None] * (len(titles) - len(row)) for row in rows[1:]]

    def assert_cells(self, got, want, what):
        self.assertEqual(len(got), len(want), what)
        for n, (g, w) in enumerate(zip(got, want), start=2):
            self.assertEqual(len(g), len(w), f"{what}: row {n}")
            for a, b in zip(g, w):
                self.assertTrue(same_cell(a, b), f"{what}: row {n}: got {g} want {w}")

    def test_customer_list_cells_equal_the_services_own_data(self):
        seen = {"chinese": 0, "decimal": 0, "null": 0, "hostile": 0}
        for token, tenant, params in ((self.t1, "1", {}), (self.t2, "2", {}),
                                      (self.t1, "1", {"keyword": "柏悦", "status": "ACTIVE"})):
            what = f"CUSTOMER_LIST tenant {tenant} {params}"
            task, got = self.export_rows(token, "CUSTOMER_LIST", params, CUSTOMER_TITLES)
            want = expected_rows(self.db, tenant, params)
            self.assertGreater(len(want), 0, what)
            self.assert_cells(got, want, what)
            for row in got:
                seen["chinese"] += "有限公司" in row[2]
                seen["decimal"] += isinstance(row[4], float) and row[4] != int(row[4])
                seen["null"] += row[8] is None or row[9] is None
                seen["hostile"] += bool(row[9]) and row[9][0] == "'"
        for kind, count in seen.items():
            self.assertGreater(count, 0, f"no {kind} cell was checked")

    def test_order_list_by_callback_and_by_sql_cells_equal_the_services_own_data(self):
        codes = [f"CUS{n:08d}" for n in (1, 2, 3, 7, 8, 11)]
        for export_type in ("ORDER_LIST", "ORDER_LIST_SQL", "ORDER_LIST_MP"):
            for token, tenant, params in ((self.t1, "1", {}),
                                          (self.t2, "2", {"status": "SHIPPED", "channel": "APP"}),
                                          (self.t1, "1", {"customerCodes": codes,
                                                          "dateTo": "2024-01-02"})):
                what = f"{export_type} tenant {tenant} {params}"
                task, got = self.export_rows(token, export_type, params, ORDER_TITLES)
                want = expected_orders(self.db, tenant, params)
                self.assertGreater(len(want), 0, what)
                self.assertEqual(int(task["totalRows"]), len(want), what)
                self.assert_cells(got, want, what)
                self.assertTrue(all(row[3] for row in got), f"{what}: a blank customer_name")
                # ORDER_LIST_MP's order is its wrapper's (order_date DESC,id ASC), as the
                # center writes it.
                self.assert_paged_by_declared_key(task["id"], what, "order_date DESC, id")

    def assert_paged_by_declared_key(self, task_id, what, order):
        """The Java sample's uniqueKey is what the center seeks by (docs/sql-template-route.md)."""
        lines = [line for line in self.c.log().splitlines()
                 if f"taskId={task_id} " in line and "paging by" in line]
        self.assertTrue(lines, f"{what}: no paging line for task {task_id}")
        self.assertTrue(all(f"paging by key (the contract's uniqueKey), order {order}"
                            in line for line in lines), f"{what}: {lines}")

    def test_the_list_page_counts_what_the_contract_counts(self):
        for tenant, params in (("1", {}), ("2", {"status": "SHIPPED"})):
            query = "&".join(f"{k}={v}" for k, v in params.items())
            page = request("GET", f"{self.java.base}{CONTEXT_PATH}/api/orders?size=5&{query}",
                           headers={"X-Tenant-Id": tenant}).json()
            plus = request("GET", f"{self.java.base}{CONTEXT_PATH}/api/orders/plus?size=5&{query}",
                           headers={"X-Tenant-Id": tenant}).json()
            self.assertEqual(plus["total"], page["total"])
            self.assertEqual(plus["records"], page["records"])
            count = self.java.post(f"{CONTEXT_PATH}{BASE_PATH}/dispatch/count?queryId=ORDER_LIST",
                                   {**params, "tenantId": tenant, "appCode": "PLATFORM",
                                    "requestedBy": "u"}).json()["data"]
            self.assertEqual(str(page["total"]), count)
            self.assertEqual(len(page["records"]), 5)
            self.assertEqual(page["total"], len(expected_orders(self.db, tenant, params)))


    def check(self, config, step="provider"):
        out = subprocess.run([os.path.join(BUILD_DIR, "export-center"), "check", "--config",
                              config, "--json"], capture_output=True, text=True, timeout=120)
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        self.assertNotIn(TOKEN, out.stdout + out.stderr)
        return out.returncode, [r for r in rows if r["step"] == step]

    def test_check_compares_each_paramschema_with_the_definitions_parameters(self):
        code, rows = self.check(self.c.config, "contract")
        self.assertEqual(code, 0, rows)
        self.assertEqual(sorted((r["status"], r["detail"]) for r in rows), [
            ("ok", f"{t}: paramSchema agrees with the definition's parameters")
            for t in ("ORDER_LIST", "ORDER_LIST_MP", "ORDER_LIST_SQL")])
        with open(self.c.config, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        doc["definitions"]["ORDER_LIST_MP"] = order_definition("ORDER_LIST_MP", "strict")
        doc["definitions"]["ORDER_LIST_SQL"]["parameters"] = [
            {**p, "type": "STRING"} if p["name"] == "dateFrom" else p
            for p in doc["definitions"]["ORDER_LIST_SQL"]["parameters"]]
        code, rows = self.check(write_yaml(os.path.join(self.c.dir, "params.yaml"), doc),
                                "contract")
        self.assertEqual(code, 1, rows)
        by_type = {r["detail"].split(":")[0]: r for r in rows}
        self.assertEqual(by_type["ORDER_LIST_SQL"]["status"], "FAIL", rows)
        self.assertIn("parameter dateFrom is DATE to the service but STRING in the definition",
                      by_type["ORDER_LIST_SQL"]["detail"])
        self.assertEqual(by_type["ORDER_LIST_MP"]["status"], "warn", rows)
        self.assertIn("the service reads parameter orderNoPrefix, which the definition does "
                      "not declare", by_type["ORDER_LIST_MP"]["detail"])
        self.assertEqual(by_type["ORDER_LIST"]["status"], "ok", rows)

    def test_check_asks_each_type_and_query_id_with_the_token(self):
        code, rows = self.check(self.c.config)
        served = [r for r in rows if "served, internal token accepted" in r["detail"]]
        self.assertEqual(sorted(r["detail"].split()[0] for r in served),
                         ["CUSTOMER_LIST", "ORDER_LIST", "ORDER_LIST_MP", "ORDER_LIST_SQL"], rows)
        self.assertTrue(all(r["status"] == "ok" for r in rows), rows)
        self.assertIn(f"POST {CONTEXT_PATH}{BASE_PATH}/dispatch/version?queryId=ORDER_LIST_MP",
                      " ".join(r["detail"] for r in served))

    def test_check_fails_on_a_wrong_token_and_an_unserved_query_id(self):
        with open(self.c.config, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        doc["provider-services"]["customer-service"]["internal-token"] = "a-wrong-token-0123456789"
        code, rows = self.check(write_yaml(os.path.join(self.c.dir, "wrong-token.yaml"), doc))
        self.assertEqual(code, 1)
        self.assertTrue(any(r["status"] == "FAIL" and "refused the internal token" in r["detail"]
                            for r in rows), rows)
        doc["provider-services"]["customer-service"]["internal-token"] = TOKEN
        doc["definitions"]["NOT_SERVED"] = {**order_definition("NOT_SERVED", "strict"),
                                            "title": "NOT_SERVED"}
        code, rows = self.check(write_yaml(os.path.join(self.c.dir, "unserved.yaml"), doc))
        self.assertEqual(code, 1)
        failed = [r for r in rows if r["status"] == "FAIL"]
        self.assertEqual(len(failed), 1, rows)
        self.assertIn("NOT_SERVED", failed[0]["detail"])
        self.assertIn("not served (HTTP 404)", failed[0]["detail"])


class SameBytesAsTheCppSdk(unittest.TestCase):
    """The C++ and the Java samples, each on its own database, given the same
    requests."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ec-java-bytes-")
        cls.cpp_db = os.path.join(cls.dir, "cpp.db")
        cls.java_db = os.path.join(cls.dir, "java.db")
        cpp_config = write_yaml(os.path.join(cls.dir, "cpp.yaml"),
                                {"customer-service": service_section(0, cls.cpp_db)})
        java_config = write_yaml(os.path.join(cls.dir, "java.yaml"),
                                 {"order-service": service_section(0, cls.java_db)})
        cls.cpp = Service([os.path.join(BUILD_DIR, "customer-service"), "--config", cpp_config],
                          os.path.join(cls.dir, "cpp.log"))
        try:
            cls.java = start_java(java_config, os.path.join(cls.dir, "java.log"))
        except BaseException:
            cls.cpp.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.java.stop()
        cls.cpp.stop()
        if not os.environ.get("EC_KEEP_TEST_DIR"):
            subprocess.run(["rm", "-rf", cls.dir], check=False)

    def both(self, path, body=None, token=TOKEN, raw=None):
        a = self.cpp.post(path, body, token=token, raw=raw)
        b = self.java.post(path, body, token=token, raw=raw)
        return a, b

    def assert_same(self, path, body=None, token=TOKEN, raw=None, status=200):
        a, b = self.both(path, body, token=token, raw=raw)
        self.assertEqual(a.status, status, (path, body, a.body[:300]))
        self.assertEqual(b.status, status, (path, body, b.body[:300]))
        self.assertEqual(a.body, b.body, (path, body))
        return a

    def test_both_samples_seed_the_same_rows(self):
        for table in ("customer", "orders"):
            rows = []
            for db in (self.cpp_db, self.java_db):
                con = sqlite3.connect(db)
                try:
                    rows.append(con.execute(f"SELECT * FROM {table} ORDER BY id").fetchall())
                finally:
                    con.close()
            self.assertEqual(len(rows[0]), CUSTOMERS if table == "customer" else ORDERS)
            self.assertEqual(rows[0], rows[1], table)

    def batch(self, tenant="1", app="PLATFORM", params=None, cursor=None, token=None, limit=500,
              task="1900000000000000001"):
        return {"taskId": task, "tenantId": tenant, "appCode": app, "requestedBy": "u1",
                "dispatchVersion": 1, "parameters": params or {}, "cursor": cursor,
                "snapshotToken": token, "limit": limit}

    def test_every_customer_list_batch_carries_the_same_data(self):
        # Equal as JSON, every value byte for byte: the C++ SDK's RowWriter (docs/provider-contract.md) writes
        # "rows" first and each row's keys in column order, the Java SDK in sorted order.
        path = "/internal/exports/v1/CUSTOMER_LIST/batches"
        batches = 0
        for tenant, params in (("1", {}), ("2", {}), ("1", {"keyword": "柏悦", "status": "ACTIVE"})):
            cursor = token = None
            while True:
                a, b = self.both(path, self.batch(tenant, params=params, cursor=cursor,
                                                  token=token, limit=300))
                self.assertEqual((a.status, b.status), (200, 200))
                self.assertEqual(json.loads(a.body), json.loads(b.body), (tenant, params, cursor))
                batches += 1
                data = json.loads(a.body)["data"]
                token = data["snapshotToken"]
                if not data["hasMore"]:
                    break
                cursor = data["nextCursor"]
        self.assertGreater(batches, 6)

    def test_refusals_are_byte_for_byte_equal(self):
        path = "/internal/exports/v1/CUSTOMER_LIST/batches"
        self.assert_same(path, self.batch(), token="wrong", status=401)
        self.assert_same(path, self.batch(), token=None, status=401)
        self.assert_same("/internal/exports/v1/NOPE/batches", self.batch(), status=404)
        self.assert_same(path, self.batch(app="MERCHANT"), status=403)
        self.assert_same(path, self.batch(limit=0), status=400)
        self.assert_same(path, self.batch(params={"status": "GONE"}), status=400)
        self.assert_same(path, self.batch(params={"keyword": 5}), status=400)
        self.assert_same(path, self.batch(params={"keyword": "x" * 65}), status=400)
        self.assert_same(path, self.batch(cursor="10000000005", token="v1.1.forged"), status=400)
        self.assert_same(path, self.batch(cursor="abc", token="v1.1.forged"), status=400)
        self.assert_same(path, raw=b"[1,2]", status=400)
        self.assert_same(path, raw=b"{", status=400)
        self.assert_same(path, raw=b"x" * (64 * 1024 + 1), status=413)
        self.assert_same("/dispatch/sql?queryId=ORDER_LIST", {}, token="wrong", status=401)
        self.assert_same("/dispatch/sql?queryId=NOPE", {}, status=404)
        self.assert_same("/dispatch/count?queryId=ORDER_LIST", raw=b"[]", status=400)
        self.assert_same("/dispatch/enrich?queryId=ORDER_LIST", {"keys": 5}, status=400)

    def context(self, tenant="1", **params):
        return {**params, "tenantId": tenant, "appCode": "PLATFORM", "requestedBy": "u1"}

    def test_count_version_and_enrich_are_byte_for_byte_equal(self):
        for query_id in ("ORDER_LIST", "ORDER_LIST_SQL"):
            for params in (self.context("1"), self.context("2", status="PAID", channel="WEB"),
                           self.context("1", keyword="SO00000001", dateTo="2024-06-30"),
                           self.context("1", customerCodes=["CUS00000001", "CUS00000006"])):
                self.assert_same(f"/dispatch/count?queryId={query_id}", params)
                self.assert_same(f"/dispatch/version?queryId={query_id}", params)
        keys = ["CUS00000002", "CUS00000001", "CUS99999999", 5, "CUS00000004"]
        for tenant in ("1", "2"):
            self.assert_same("/dispatch/enrich?queryId=ORDER_LIST",
                             {"keyColumn": "customer_code", "keys": keys,
                              "columns": ["customer_name"], "parameters": self.context(tenant)})

    def render(self, template, params):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", dir=self.dir, delete=False) as t:
            t.write(template)
        with tempfile.NamedTemporaryFile("w", suffix=".json", dir=self.dir, delete=False) as p:
            json.dump(params, p)
        out = subprocess.run([os.path.join(BUILD_DIR, "export-center"), "sql", "render",
                              "--template-file", t.name, "--params-file", p.name],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        return " ".join(result["sql"].split()), result["bindings"]

    def test_sql_contracts_are_equal_and_their_templates_render_the_same(self):
        samples = (self.context("1"), self.context("2", status="SHIPPED", channel="APP"),
                   self.context("1", keyword="SO1", dateFrom="2024-01-01", dateTo="2024-03-01",
                                customerCodes=["CUS00000001", "CUS00000002"]))
        for query_id in ("ORDER_LIST", "ORDER_LIST_SQL"):
            a, b = self.both(f"/dispatch/sql?queryId={query_id}", self.context("1"))
            self.assertEqual((a.status, b.status), (200, 200))
            cpp, java = json.loads(a.body)["data"], json.loads(b.body)["data"]
            cpp_tpl, java_tpl = cpp.pop("sqlTemplate"), java.pop("sqlTemplate")
            # The Java sample documents its parameters; the C++ one sends {}.
            self.assertEqual(cpp.pop("paramSchema"), {})
            self.assertEqual([p["name"] for p in java.pop("paramSchema")["parameters"]],
                             ["status", "channel", "dateFrom", "dateTo", "keyword", "customerCodes"])
            # Both declare their keyset key, compared with the rest below.
            self.assertEqual(java["uniqueKey"], ["id"])
            enrich = [(e.pop("sql"), f.pop("sql")) for e, f in zip(cpp["enrichSqls"],
                                                                   java["enrichSqls"])]
            self.assertEqual(cpp, java, query_id)
            self.assertEqual(len(enrich), 1 if query_id == "ORDER_LIST_SQL" else 0)
            for params in samples:
                self.assertEqual(self.render(cpp_tpl, params), self.render(java_tpl, params),
                                 (query_id, params))
                for cpp_sql, java_sql in enrich:
                    with_keys = {**params, "keys": ["CUS00000001", "CUS00000003"]}
                    self.assertEqual(self.render(cpp_sql, with_keys),
                                     self.render(java_sql, with_keys))


class RichColumnsLikeEasyExcel(unittest.TestCase):
    """Issue 45, item 7: ORDER_RICH, which the Java sample sends through the starter from
    RichOrderRow (a two-level @ExcelProperty, customers' orders merged by value, an enum status
    shown through its EasyExcel converter, an enum channel with labels), gives the file the
    service's own EasyExcel download writes from the same DTO and rows
    (GET /api/orders/rich.xlsx): the same header cells, merged ranges and labels. Both files are
    generated here; openpyxl reads them. Needs the center's wire parsing of the column options
    (issue 45: title arrays, merge, mergeWithin, labels)."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=CUSTOMERS, prefix="ec-java-rich-")
        cls.db = os.path.join(cls.c.dir, "java.db")
        port = free_port()
        cls.c.write_config({
            "customer-service": None,
            "order-service": service_section(port, cls.db),
            "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 10},
            "provider-services": {"customer-service": {
                "base-url": f"http://127.0.0.1:{port}", "internal-token": TOKEN}},
            "definitions": {"ORDER_RICH": {
                "title": "订单明细", "source": "provider", "provider-service": "customer-service",
                "provider-path": "/internal/exports/v1/ORDER_RICH/batches",
                "required-permission": "platform:order:export", "app-scope": "PLATFORM",
                "max-rows": 200000,
                # Several batches, so runs cross batch boundaries.
                "batch-size": 300}},
        })
        try:
            cls.java = start_java(cls.c.config, os.path.join(cls.c.dir, "java.log"))
            cls.c.start_center()
        except BaseException:
            cls.c.cleanup()
            raise
        cls.token = cls.c.token("rich", "1", perms=("platform:order:export",))

    @classmethod
    def tearDownClass(cls):
        cls.java.stop()
        cls.c.cleanup()

    @staticmethod
    def visible(ws):
        """{(row, column): value} of every cell a viewer shows: a merged range's hidden cells
        are left out (EasyExcel writes the value into them, the center leaves them empty)."""
        hidden = set()
        for m in ws.merged_cells.ranges:
            for row in range(m.min_row, m.max_row + 1):
                for col in range(m.min_col, m.max_col + 1):
                    if (row, col) != (m.min_row, m.min_col):
                        hidden.add((row, col))
        return {(cell.row, cell.column): cell.value
                for row in ws.iter_rows() for cell in row
                if (cell.row, cell.column) not in hidden}

    def test_the_centers_file_has_easyexcels_header_merges_and_labels(self):
        # The service's own EasyExcel file first: what the team's users get today.
        r = request("GET", f"{self.java.base}/api/orders/rich.xlsx", headers={"X-Tenant-Id": "1"})
        self.assertEqual(r.status, 200, r.body[:300])
        easy_path = os.path.join(self.c.dir, "easyexcel.xlsx")
        with open(easy_path, "wb") as f:
            f.write(r.body)
        easy = openpyxl.load_workbook(easy_path).worksheets[0]
        # Then the center's, of the same DTO and rows through the starter.
        _, body = self.c.export_file(self.token, "ORDER_RICH", {}, "XLSX")
        center_path = os.path.join(self.c.dir, "center.xlsx")
        with open(center_path, "wb") as f:
            f.write(body)
        center = openpyxl.load_workbook(center_path).worksheets[0]
        header_rows, columns = 2, 7

        # Header cells: the groups 客户 and 订单 over two columns each, the single-level titles
        # merged down over both header rows.
        want_header = {(1, 1): "客户", (1, 3): "订单", (1, 5): "状态", (1, 6): "渠道", (1, 7): "金额",
                       (2, 1): "客户编码", (2, 2): "客户名称", (2, 3): "订单号", (2, 4): "下单月份"}
        for name, ws in (("EasyExcel", easy), ("center", center)):
            shown = self.visible(ws)
            header = {k: v for k, v in shown.items() if k[0] <= header_rows and v not in (None, "")}
            self.assertEqual(header, want_header, name)

        # Merged ranges: the header's and the data's (a customer's orders, its name within it,
        # equal months within a customer), all of them equal.
        def merges(ws):
            return sorted(str(m) for m in ws.merged_cells.ranges)
        self.assertEqual(merges(center), merges(easy))
        data_merges = [m for m in center.merged_cells.ranges if m.min_row > header_rows]
        self.assertTrue(any(m.min_col == 1 for m in data_merges), "no customer merged")
        self.assertTrue(any(m.min_col == 4 for m in data_merges), "no month merged")
        for col in (2, 4):
            # mergeWithin: never across two customers.
            for m in (m for m in data_merges if m.min_col == col):
                self.assertTrue(any(p.min_col == 1 and p.min_row <= m.min_row and m.max_row <= p.max_row
                                    for p in data_merges) or m.min_row == m.max_row, str(m))

        # Every shown data cell of the six text columns equal (labels included), the amounts
        # equal as numbers (EasyExcel's @NumberFormat writes text, the center a number).
        easy_cells, center_cells = self.visible(easy), self.visible(center)
        rows = easy.max_row
        self.assertGreater(rows - header_rows, 300, "fewer rows than one batch")
        self.assertEqual(center.max_row, rows)
        statuses, channels = set(), set()
        for row in range(header_rows + 1, rows + 1):
            for col in range(1, columns):
                if (row, col) in easy_cells:
                    self.assertEqual(center_cells.get((row, col)), easy_cells[(row, col)], (row, col))
            def number(v):
                return float(str(v).replace(",", ""))
            self.assertEqual(number(easy_cells[(row, columns)]),
                             number(center_cells[(row, columns)]), (row, columns))
            statuses.add(center_cells[(row, 5)])
            channels.add(center_cells[(row, 6)])
        self.assertEqual(statuses, {"新建", "已支付", "已发货", "已完成", "已退款"})
        self.assertEqual(channels, {"网页", "手机App", "门店"})


def main():
    global BUILD_DIR
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
