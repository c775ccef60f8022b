"""`export-center check` (docs/deploy.md#before-the-first-start) with the built
binary, against real peers: the SQLite task store migrated by `export-center
migrate`, a local storage folder, the sample customer-service as the provider
service, its own SQLite file as a sql-template datasource.

- a good configuration: exit 0, every step ok, in text and --json, no secret
  printed;
- one thing broken per configuration (a datasource file that does not exist,
  a PostgreSQL datasource on a closed port, a storage folder that cannot be
  written, a provider URL on a closed port, a store never migrated, a store
  one migration behind, an invalid file): exit 1, that step FAIL with a
  clear detail, every other step still reported ok;
- nothing changed: a missing database file or storage folder is not created,
  a store behind keeps its version;
- settings from the environment (docs/configuration.md#environment): `check`
  prints each one set by a variable with the variable's name (secrets hidden),
  a misspelt variable fails the config step with the nearest name, and `serve`
  runs with the values the variables set.

CheckCommandBackendsTest (its own CTest entry: it starts a real S3Proxy,
scripts/test-s3.sh, and a RocketMQ NameServer + broker, scripts/test-rocketmq.sh):
- storage.kind s3: ok with the right credentials (the marker object deleted
  again), FAIL with a wrong secret key, which is never printed;
- channel.kind rocketmq: FAIL naming `export-center rocketmq init` before it
  ran, ok after.

Run: /usr/bin/python3 check_command_test.py BUILD_DIR [CheckCommandTest|CheckCommandBackendsTest]
"""
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Cluster, ScriptServer, free_port, rocketmq_channel  # noqa: E402
from export_center_testkit import project_version, source_commit  # noqa: E402

BUILD_DIR = None
VERSION = project_version()
COMMIT = source_commit()
STEPS = ["version", "config", "setting", "store", "storage", "channel", "datasource", "provider", "contract", "auth"]
JWT_SECRET = "e2e-secret-0123456789-0123456789"
INTERNAL_TOKEN = "e2e-internal-token"
DB_PASSWORD = "datasource-pw-4711"

ORDER_LIST = {"title": "ORDER_LIST", "source": "sql-template",
              "provider-service": "customer-service", "query-id": "ORDER_LIST",
              "datasource": "replica", "consistency": "lenient",
              "required-permission": "platform:order:export", "app-scope": "PLATFORM",
              "max-rows": 1000, "batch-size": 100, "timezone": "Asia/Shanghai",
              "parameters": [{"name": "keyword", "type": "STRING"}]}


class CheckCommandBase(unittest.TestCase):
    """The sample provider, a migrated store and a good config; `check` runs."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(BUILD_DIR, seed=50, prefix="ec-check-")
        cls.good = {
            "datasources": {"replica": {"kind": "sqlite",
                                        "sqlite-path": os.path.join(cls.c.dir, "customers.db")}},
            "definitions": {"ORDER_LIST": ORDER_LIST},
        }
        cls.c.write_config(cls.good)
        cls.c.start_provider()  # also creates customers.db
        cls.binary = os.path.join(cls.c.build_dir, "export-center")
        subprocess.run([cls.binary, "migrate", "--config", cls.c.config], check=True,
                       capture_output=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.c.cleanup()

    def check(self, overrides=None, name="good", json_out=False, secrets=(), env=None,
              plan_tenant=None):
        """Runs `check` on the good config with `overrides` (and `env` added to
        the environment); (exit code, {step: [(status, detail)]}, stdout)."""
        path = self.c.write_config(_merge(self.good, overrides or {}),
                                   path=os.path.join(self.c.dir, f"{name}.yaml"))
        args = [self.binary, "check", "--config", path] + (["--json"] if json_out else [])
        if plan_tenant is not None:
            args += ["--plan-tenant", plan_tenant]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60,
                           env={**os.environ, **(env or {})})
        steps = {}
        for line in r.stdout.splitlines():
            if json_out:
                row = json.loads(line)
                status, step, detail = row["status"], row["step"], row["detail"]
            else:
                status, step, detail = line.split(None, 2)
            steps.setdefault(step, []).append((status, detail))
        for secret in (JWT_SECRET, INTERNAL_TOKEN, DB_PASSWORD, *secrets):
            self.assertNotIn(secret, r.stdout + r.stderr)
        return r.returncode, steps, r.stdout

    def assert_only_failing(self, steps, failing, skipped=()):
        self.assertEqual(list(steps), STEPS, steps)
        for step, rows in steps.items():
            want = "FAIL" if step == failing else "skip" if step in skipped else "ok"
            for status, detail in rows:
                self.assertEqual(status, want, f"{step}: {detail}")

class CheckCommandTest(CheckCommandBase):
    def test_plan_tenant_lists_each_scenarios_plan_advice(self):
        """docs/sql-template-route.md#plan-advice: the sample's own file has
        the index its ORDER_LIST pages need; a copy without it gets advice
        naming the table and the index, as a warning that fails nothing."""
        code, steps, out = self.check(plan_tenant="1")
        self.assertEqual(code, 0, out)
        self.assertEqual(list(steps), STEPS + ["plan"], out)
        self.assertEqual(steps["plan"], [("ok", "ORDER_LIST: no plan advice (tenant 1)")])

        bare = os.path.join(self.c.dir, "customers-bare.db")
        source = sqlite3.connect(os.path.join(self.c.dir, "customers.db"))
        copy = sqlite3.connect(bare)
        source.backup(copy)
        source.close()
        copy.execute("DROP INDEX orders_tenant_date")
        copy.commit()
        copy.close()
        code, steps, out = self.check(
            {"datasources": {"replica": {"kind": "sqlite", "sqlite-path": bare}}},
            name="plan-bare", plan_tenant="1")
        self.assertEqual(code, 0, out)
        plan = steps["plan"]
        self.assertTrue(plan, out)
        self.assertEqual({status for status, _ in plan}, {"warn"}, out)
        page = [d for _, d in plan if d.startswith('ORDER_LIST: page: table "orders"')]
        # The scan of orders, and the sort the scan's rows then need for the
        # list's order: an index in that order serves both.
        self.assertEqual(len(page), 2, out)
        scan = [d for d in page if "ORDER BY" not in d]
        sort = [d for d in page if "USE TEMP B-TREE FOR ORDER BY" in d]
        self.assertEqual(len(scan), 1, out)
        self.assertIn('"tenant_id" = ?', scan[0])
        self.assertIn('CREATE INDEX "orders_tenant_id', scan[0])
        self.assertIn('ON "orders" ("tenant_id"', scan[0])
        self.assertEqual(len(sort), 1, out)
        self.assertIn('ON "orders" ("tenant_id", "order_date" DESC, "id")', sort[0])
        self.assertNotIn("plan", self.check()[1])  # without --plan-tenant: no plan step

    def test_good_config_passes_every_step(self):
        code, steps, out = self.check()
        self.assertEqual(code, 0, out)
        self.assert_only_failing(steps, None)
        # The build and the schema: found in the database, and wanted by this binary.
        self.assertEqual(steps["version"], [("ok", f"export-center {VERSION} (commit {COMMIT})")])
        con = sqlite3.connect(os.path.join(self.c.dir, "center.db"))
        found = con.execute("SELECT MAX(version) FROM export_schema_version").fetchone()[0]
        con.close()
        self.assertTrue(steps["store"][0][1].endswith(
            f": schema version {found} found, this binary wants {found}"), out)
        self.assertIn("is writable", steps["storage"][0][1])
        self.assertIn("replica: sqlite", steps["datasource"][0][1])
        self.assertIn("SELECT 1 answered", steps["datasource"][0][1])
        self.assertIn(f"{self.c.provider_base}: answered HTTP", steps["provider"][0][1])
        self.assertIn("HS256", steps["auth"][0][1])

    def test_settings_say_where_their_values_came_from(self):
        env_secret = "env-jwt-secret-0123456789-0123456789"
        env = {"EXPORT_CENTER_CONSUMER__CONCURRENCY": "7",
               "EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX": "staging-",
               "EXPORT_CENTER_JWT_SECRET": env_secret}
        code, steps, out = self.check(env=env, name="from-env", secrets=(env_secret,))
        self.assertEqual(code, 0, out)
        self.assert_only_failing(steps, None)
        rows = [detail for _, detail in steps["setting"]]
        self.assertIn("consumer.concurrency = 7 (EXPORT_CENTER_CONSUMER__CONCURRENCY)", rows)
        self.assertIn('channel.rocketmq.topic-prefix = "staging-" '
                      "(EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX)", rows)
        self.assertIn("auth.jwt-hs256-secret = (hidden) (EXPORT_CENTER_JWT_SECRET)", rows)
        self.assertIn(f"server.port = {self.c.center_port} (file)", rows)
        self.assertRegex(rows[-1], r"^\d+ other setting\(s\) at their default$")
        # Without the variables the same keys come from the file or the default.
        code, steps, out = self.check(name="from-file")
        rows = [detail for _, detail in steps["setting"]]
        self.assertFalse([r for r in rows if "EXPORT_CENTER_CONSUMER__" in r], rows)

    def test_a_variable_that_names_no_setting_fails_the_config_step(self):
        code, steps, out = self.check(env={"EXPORT_CENTER_CONSUMER_CONCURRENCY": "7"},
                                      name="typo-env")
        self.assertEqual(code, 1, out)
        self.assertEqual(list(steps), ["version", "config"], out)
        self.assertIn("EXPORT_CENTER_CONSUMER_CONCURRENCY: names no setting (did you mean "
                      "'EXPORT_CENTER_CONSUMER__CONCURRENCY'?)", steps["config"][0][1])

    def test_serve_runs_with_the_values_the_environment_sets(self):
        env = {"EXPORT_CENTER_CONSUMER__CONCURRENCY": "7",
               "EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX": "staging-"}
        self.c.start_center(env=env)
        try:
            deadline = time.monotonic() + 20
            while True:  # the start-up lines may follow /healthz by a moment
                with open(os.path.join(self.c.dir, "center.log"), encoding="utf-8") as f:
                    log = f.read()
                if "settings from the environment" in log or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        finally:
            self.c.stop_center()
        self.assertRegex(log, r"started: database sqlite, channel embedded, consumers 7,")
        self.assertIn("settings from the environment: EXPORT_CENTER_CONSUMER__CONCURRENCY, "
                      "EXPORT_CENTER_CHANNEL__ROCKETMQ__TOPIC_PREFIX", log)

    def test_json_prints_one_object_per_step(self):
        code, steps, out = self.check(json_out=True)
        self.assertEqual(code, 0, out)
        self.assert_only_failing(steps, None)

    def test_nothing_of_a_kind_configured_is_a_skip_and_still_passes(self):
        code, steps, out = self.check({"definitions": {"ORDER_LIST": None},
                                       "datasources": None}, name="provider-only")
        self.assertEqual(code, 0, out)
        self.assertEqual(steps["datasource"],
                         [("skip", "no sql-template definition names a datasource")])

    def test_missing_datasource_file_fails_the_datasource_step(self):
        missing = os.path.join(self.c.dir, "no-such-replica.db")
        code, steps, out = self.check(
            {"datasources": {"replica": {"kind": "sqlite", "sqlite-path": missing}}},
            name="missing-ds")
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "datasource")
        self.assertIn(missing, steps["datasource"][0][1])
        self.assertFalse(os.path.exists(missing), "check created the datasource file")

    def test_postgres_datasource_on_a_closed_port_fails_without_its_password(self):
        url = f"postgresql://reader:{DB_PASSWORD}@127.0.0.1:{free_port()}/orders"
        code, steps, out = self.check(
            {"datasources": {"replica": {"kind": "postgres", "url": url}}}, name="pg-closed")
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "datasource")
        detail = steps["datasource"][0][1]
        self.assertIn("replica: postgres postgresql://reader:***@127.0.0.1", detail)
        self.assertRegex(detail.lower(), "refused|could not connect|connection")

    def test_postgres_datasource_password_in_any_form_is_never_printed(self):
        port = free_port()
        for name, url in [
                ("pg-keywords", f"host=127.0.0.1 port={port} user=reader password={DB_PASSWORD}"),
                ("pg-quoted", f"host=127.0.0.1 port={port} password='{DB_PASSWORD} x' user=r"),
                ("pg-query", f"postgresql://127.0.0.1:{port}/orders?password={DB_PASSWORD}")]:
            with self.subTest(name):
                code, steps, out = self.check(
                    {"datasources": {"replica": {"kind": "postgres", "url": url}}}, name=name)
                self.assertEqual(code, 1, out)
                self.assert_only_failing(steps, "datasource")
                self.assertNotIn(DB_PASSWORD, out)
                self.assertIn("***", steps["datasource"][0][1])

    def test_config_error_quoting_a_url_masks_its_password(self):
        code, steps, out = self.check(
            {"notifications": {"receivers": {"hook": {
                "url": f"https://ops:{DB_PASSWORD}@hooks.example/x",
                "secret": "0123456789abcdef0123"}}}}, name="hook-userinfo")
        self.assertEqual(code, 1, out)
        self.assertEqual(list(steps), ["version", "config"], out)
        self.assertNotIn(DB_PASSWORD, out)
        self.assertIn("https://ops:***@hooks.example/x", steps["config"][0][1])

    def test_storage_folder_that_cannot_be_written_fails_the_storage_step(self):
        # A regular file where a folder should be: refused for root too,
        # which a chmod would not be.
        blocker = os.path.join(self.c.dir, "not-a-folder")
        with open(blocker, "w") as f:
            f.write("x")
        for root in (blocker, os.path.join(blocker, "files")):
            code, steps, out = self.check({"storage": {"root": root}}, name="storage-file")
            self.assertEqual(code, 1, out)
            self.assert_only_failing(steps, "storage")
            self.assertIn(f"{blocker} is not a folder", steps["storage"][0][1])
        if os.geteuid() != 0:
            ro = os.path.join(self.c.dir, "read-only")
            os.makedirs(ro)
            os.chmod(ro, 0o555)
            code, steps, out = self.check({"storage": {"root": ro}}, name="storage-ro")
            self.assertEqual(code, 1, out)
            self.assertIn("is not writable", steps["storage"][0][1])

    def test_missing_storage_folder_is_ok_and_not_created(self):
        root = os.path.join(self.c.dir, "later", "files")
        code, steps, out = self.check({"storage": {"root": root}}, name="storage-later")
        self.assertEqual(code, 0, out)
        self.assertIn("does not exist yet", steps["storage"][0][1])
        self.assertFalse(os.path.exists(os.path.join(self.c.dir, "later")))

    def test_provider_on_a_closed_port_fails_the_provider_step(self):
        base = f"http://127.0.0.1:{free_port()}"
        code, steps, out = self.check(
            {"provider-services": {"customer-service": {"base-url": base,
                                                        "internal-token": INTERNAL_TOKEN}}},
            name="provider-closed")
        self.assertEqual(code, 1, out)
        # An unserved queryId's paramSchema is not read: a skip, not a second failure.
        self.assert_only_failing(steps, "provider", skipped=("contract",))
        self.assertEqual(steps["contract"], [("skip", "ORDER_LIST: paramSchema not read, the "
                                                      "queryId was not served (provider step)")])
        self.assertIn(f"customer-service: {base}: no HTTP answer", steps["provider"][0][1])
        self.assertIn("connection refused", steps["provider"][0][1])

    def test_postgres_store_on_a_closed_port_fails_without_its_password(self):
        url = f"postgresql://center:{DB_PASSWORD}@127.0.0.1:{free_port()}/center"
        code, steps, out = self.check({"database": {"kind": "postgres", "postgres-url": url}},
                                      name="pg-store-closed")
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "store")
        self.assertIn("postgres postgresql://center:***@127.0.0.1", steps["store"][0][1])
        self.assertRegex(steps["store"][0][1].lower(), "refused|could not connect|connection")

    def test_mysql_store_shows_its_tls_settings_but_no_key_material(self):
        key = os.path.join(self.c.dir, "db-client.key")
        key_text = "-----BEGIN PRIVATE KEY-----\nnot-a-real-key-7f3a9c\n-----END PRIVATE KEY-----\n"
        with open(key, "w") as f:
            f.write(key_text)
        url = f"mysql://center:{DB_PASSWORD}@127.0.0.1:{free_port()}/center"
        code, steps, out = self.check(
            {"database": {"kind": "mysql", "mysql-url": url, "ssl-mode": "verify-ca",
                          "ssl-ca": "/etc/ec/ca.pem", "ssl-cert": "/etc/ec/client.pem",
                          "ssl-key": key}},
            name="mysql-store-tls", secrets=("not-a-real-key-7f3a9c",))
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "store")
        self.assertIn("mysql mysql://center:***@127.0.0.1", steps["store"][0][1])
        self.assertIn(f"(ssl-mode verify-ca, ssl-ca /etc/ec/ca.pem, ssl-cert /etc/ec/client.pem, "
                      f"ssl-key {key})", steps["store"][0][1])

    def test_provider_that_never_answers_fails_after_the_read_timeout(self):
        # A socket that listens but never accepts: the kernel completes the
        # connection, nothing ever answers.
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(8)
            base = f"http://127.0.0.1:{silent.getsockname()[1]}"
            started = time.monotonic()
            code, steps, out = self.check(
                {"provider": {"read-timeout-ms": 800},
                 "provider-services": {"customer-service": {"base-url": base}}},
                name="provider-silent")
            took = time.monotonic() - started
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "provider", skipped=("contract",))
        self.assertIn("no answer within the read timeout of 800 ms", steps["provider"][0][1])
        self.assertLess(took, 10)

    def test_store_never_migrated_fails_and_is_not_created(self):
        path = os.path.join(self.c.dir, "fresh.db")
        code, steps, out = self.check({"database": {"sqlite-path": path}}, name="fresh")
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "store")
        self.assertIn("run `export-center migrate`", steps["store"][0][1])
        self.assertFalse(os.path.exists(path), "check created the database file")

    def test_store_one_migration_behind_fails_and_keeps_its_version(self):
        path = os.path.join(self.c.dir, "behind.db")
        config = self.c.write_config(_merge(self.good, {"database": {"sqlite-path": path}}),
                                     path=os.path.join(self.c.dir, "behind-migrate.yaml"))
        subprocess.run([self.binary, "migrate", "--config", config], check=True,
                       capture_output=True, timeout=60)
        con = sqlite3.connect(path)
        latest = con.execute("SELECT MAX(version) FROM export_schema_version").fetchone()[0]
        con.execute("DELETE FROM export_schema_version WHERE version = ?", (latest,))
        con.commit()
        con.close()
        code, steps, out = self.check({"database": {"sqlite-path": path}}, name="behind")
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "store")
        self.assertIn(f"schema version {latest - 1}, this binary needs {latest}; "
                      "run `export-center migrate`", steps["store"][0][1])
        con = sqlite3.connect(path)
        now = con.execute("SELECT MAX(version) FROM export_schema_version").fetchone()[0]
        con.close()
        self.assertEqual(now, latest - 1, "check migrated the store")

    def test_invalid_config_stops_at_the_config_step(self):
        code, steps, out = self.check({"storage": {"kind": "floppy"}}, name="invalid")
        self.assertEqual(code, 1, out)
        self.assertEqual(list(steps), ["version", "config"], out)
        status, detail = steps["config"][0]
        self.assertEqual(status, "FAIL")
        self.assertIn('(1 problem): storage.kind: "floppy" is not supported', detail)


class CheckCommandBackendsTest(CheckCommandBase):
    """The same binary on storage.kind s3 and channel.kind rocketmq."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.s3 = ScriptServer("test-s3.sh", "ec-check-s3-")
        cls.mq = ScriptServer("test-rocketmq.sh", "ec-check-mq-")
        try:
            out = subprocess.run([cls.s3.script, "start", cls.s3.dir], check=True,
                                 capture_output=True, text=True, timeout=120).stdout
            cls.s3.address = "started"  # lets stop() run the script's stop
            cls.s3_env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
            cls.namesrv = cls.mq.start()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for server in (getattr(cls, "s3", None), getattr(cls, "mq", None)):
            if server is not None:
                server.stop()
        super().tearDownClass()

    def s3_storage(self, secret_key):
        bucket = f"check-{os.getpid()}"
        os.makedirs(os.path.join(self.s3.dir, "data", bucket), exist_ok=True)
        return {"kind": "s3", "root": None, "s3": {
            "endpoint": self.s3_env["EXPORT_CENTER_S3_ENDPOINT"], "bucket": bucket,
            "region": self.s3_env["EXPORT_CENTER_S3_REGION"],
            "access-key": self.s3_env["EXPORT_CENTER_S3_ACCESS_KEY"],
            "secret-key": secret_key, "path-style": True}}, bucket

    def test_s3_storage_is_written_and_cleaned_with_the_right_secret_and_refused_without(self):
        secret = self.s3_env["EXPORT_CENTER_S3_SECRET_KEY"]
        storage, bucket = self.s3_storage(secret)
        code, steps, out = self.check({"storage": storage}, name="s3", secrets=(secret,))
        self.assertEqual(code, 0, out)
        self.assert_only_failing(steps, None)
        self.assertIn(f"bucket {bucket} at {self.s3_env['EXPORT_CENTER_S3_ENDPOINT']}: listed "
                      "exports/, wrote and deleted one marker object", steps["storage"][0][1])
        left = [f for _, _, files in os.walk(os.path.join(self.s3.dir, "data", bucket))
                for f in files]
        self.assertEqual(left, [], "the marker object was left in the bucket")

        wrong = "wrong-secret-key-0123456789"
        storage, _ = self.s3_storage(wrong)
        code, steps, out = self.check({"storage": storage}, name="s3-wrong",
                                      secrets=(secret, wrong))
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "storage")
        self.assertIn(f"list exports/ of bucket {bucket}", steps["storage"][0][1])

    def test_rocketmq_channel_fails_before_init_and_passes_after(self):
        prefix = f"check-{os.getpid()}-"
        channel = rocketmq_channel(self.namesrv, prefix)
        code, steps, out = self.check(channel, name="mq")
        self.assertEqual(code, 1, out)
        self.assert_only_failing(steps, "channel")
        detail = steps["channel"][0][1]
        self.assertIn(f"topic {prefix}export-center-command-v1", detail)
        self.assertIn(f"group {prefix}export-center-worker-v1", detail)
        self.assertTrue(detail.endswith("run `export-center rocketmq init`"), detail)

        path = os.path.join(self.c.dir, "mq.yaml")
        subprocess.run([self.binary, "rocketmq", "init", "--config", path], check=True,
                       capture_output=True, timeout=180)
        code, steps, out = self.check(channel, name="mq")
        self.assertEqual(code, 0, out)
        self.assert_only_failing(steps, None)
        self.assertIn("1 master broker(s)", steps["channel"][0][1])


def _merge(base, overrides):
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
