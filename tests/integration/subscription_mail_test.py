#!/usr/bin/env python3
"""What a finished subscription run delivers, end to end (docs/subscriptions.md#what-a-finished-run-delivers).

The real `export-center serve` (its delivery duty and its mailer), the sample
customer service, and a real SMTP server (aiosmtpd, tests/notify/smtp_server.py,
pinned by scripts/install-smtp-server.sh) that writes each accepted message as
JSON read by Python's email package. Subscriptions and their runs are written
straight into the center's database (PAUSED, so no scheduler fires them); each
run points at a task the test made through the API, as a scheduler's run would.

Checked: a finished run's mail arrives, its signed link is followed over the
real HTTP server and the file read with openpyxl (the same bytes as stored,
the use audited as SIGNED_LINK); `attach` sends the stored bytes; over
mail.attachment-max-bytes the file is not attached and the mail says so;
skip-if-empty sends nothing and records it; failures send one notice per
grace period; two instances deliver one mail per run; the unsubscribe link
removes its recipient and a bad signature is refused; the metrics count; a
zh-CN subscription's mail is in Chinese (its RFC 2047 subject decoded by the
email package); each mail carries List-Unsubscribe and List-Unsubscribe-Post
(RFC 8058) and the one-click POST to that URL unsubscribes its recipient.

Run: /usr/bin/python3 subscription_mail_test.py BUILD_DIR [-k NAME]
"""
import base64
import email
import email.policy
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

import openpyxl

sys.path.insert(0, os.path.dirname(__file__))
from harness import REPO, Cluster, free_port, request  # noqa: E402

BUILD_DIR = None
HOUR_MS = 3600 * 1000


class SmtpServer:
    """aiosmtpd on loopback without TLS (mail.tls: none is allowed there)."""

    def __init__(self):
        path = subprocess.check_output(
            [os.path.join(REPO, "scripts", "install-smtp-server.sh")], text=True).strip()
        self.dir = tempfile.mkdtemp(prefix="ec-sub-smtp-")
        self.port = free_port()
        with open(os.path.join(self.dir, "server.log"), "ab") as log:
            self.proc = subprocess.Popen(
                ["/usr/bin/python3", os.path.join(REPO, "tests", "notify", "smtp_server.py"),
                 "--port", str(self.port), "--dir", self.dir],
                env={**os.environ, "PYTHONPATH": path}, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while not os.path.exists(os.path.join(self.dir, "ready")):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("the SMTP server did not start")
            time.sleep(0.05)

    def messages(self):
        out = []
        for path in sorted(glob.glob(os.path.join(self.dir, "*.json")),
                           key=lambda p: int(os.path.basename(p).split(".")[0])):
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
            out.append({**record["message"], "rcpt_tos": record["rcpt_tos"],
                        "eml": path[:-len(".json")] + ".eml"})
        return out

    @staticmethod
    def parsed(message):
        """The whole message as Python's email package reads it (every header)."""
        with open(message["eml"], "rb") as f:
            return email.message_from_bytes(f.read(), policy=email.policy.default)

    def wait_for(self, predicate, timeout=60, what="mail"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = [m for m in self.messages() if predicate(m)]
            if got:
                return got
            time.sleep(0.1)
        raise AssertionError(f"{what} did not arrive in {timeout}s: {self.messages()}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def mail_overrides(smtp_port, cap=10 * 1024 * 1024):
    return {
        "mail": {"enabled": True, "host": "127.0.0.1", "port": smtp_port, "tls": "none",
                 "from": "exports@example.com", "allowed-domains": ["example.com"],
                 "attachment-max-bytes": cap, "poll-interval-ms": 200},
        "subscriptions": {"delivery-poll-interval-ms": 200, "failure-grace-period-minutes": 60,
                          "link-ttl-minutes": 30},
    }


def to_of(message):
    return message["to"].strip().lower()


class SubscriptionMailTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.smtp = SmtpServer()
        cls.cluster = Cluster(BUILD_DIR, prefix="ec-sub-mail-",
                              overrides=mail_overrides(cls.smtp.port))
        cls.cluster.start()
        cls.token = cls.cluster.token("alice", "t1")
        cls.next_id = 7_000_000 + int(time.time()) % 100_000 * 10

    @classmethod
    def tearDownClass(cls):
        cls.cluster.cleanup()
        cls.smtp.stop()

    # ---- the rows a scheduler would have written ------------------------------------

    def subscription(self, emails, attach=False, skip_if_empty=False, name="Weekly customers",
                     locale=None):
        cls = type(self)
        cls.next_id += 1
        sid = cls.next_id
        delivery = json.dumps({"emails": emails, "attach": attach, "skipIfEmpty": skip_if_empty})
        now = int(time.time() * 1000)
        self.cluster.db().execute(
            "INSERT INTO export_subscription (id, tenant_id, app_code, owner, export_type, format,"
            " task_name, parameters_json, cron, time_zone, business_days_only, delivery_json,"
            " state, pause_reason, pause_detail, consecutive_failures, next_slot_at,"
            " last_slot_at, version, created_at, updated_at, locale) VALUES (?, 't1', 'PLATFORM',"
            " 'alice', 'CUSTOMER_LIST', 'XLSX', ?, '{}', '0 9 * * MON', 'Asia/Shanghai', 0, ?,"
            " 'PAUSED', 'OWNER', 'paused by the test: no scheduler fires it', 0, NULL, NULL, 1,"
            " ?, ?, ?)", (sid, name, delivery, now, now, locale))
        return sid

    def run_row(self, sid, slot, outcome="CREATED", task_id=None, detail=None):
        now = int(time.time() * 1000)
        self.cluster.db().execute(
            "INSERT INTO export_subscription_run (subscription_id, slot_at, outcome, task_id,"
            " instance, lease_until, claims, detail, fired_at, updated_at)"
            " VALUES (?, ?, ?, ?, 'scheduler-of-the-test', NULL, 1, ?, ?, ?)",
            (sid, slot, outcome, task_id, detail, now, now))

    def delivery_of(self, sid, slot, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = self.cluster.db().query(
                "SELECT delivery, delivery_detail FROM export_subscription_run"
                " WHERE subscription_id = ? AND slot_at = ?", (sid, slot))
            if rows and rows[0]["delivery"]:
                return rows[0]
            time.sleep(0.1)
        raise AssertionError(f"run {sid}/{slot} was not delivered in {timeout}s")

    def finished_task(self, parameters=None, name="Weekly customers"):
        created = self.cluster.create(self.token, parameters=parameters or {"status": "ACTIVE"},
                                      name=name)
        self.assertEqual(created["code"], "200", created)
        task = self.cluster.wait_task(self.token, created["data"]["id"], states=("SUCCEEDED",))
        return task

    def stored_bytes(self, task_id):
        key = self.cluster.task_row(task_id)["object_key"]
        with open(os.path.join(self.cluster.storage_root, key), "rb") as f:
            return f.read()

    def mails_to(self, address, sid):
        return [m for m in self.smtp.messages()
                if to_of(m) == address and f"<sub.{sid}." in m["message_id"]]

    # ---- the tests --------------------------------------------------------------------

    def test_a_finished_run_mails_a_signed_link_that_downloads_the_file(self):
        task = self.finished_task(name="Weekly customers")
        sid = self.subscription(["bob@example.com", "carol@example.com"])
        slot = 1_770_000_000_000
        self.run_row(sid, slot, task_id=int(task["id"]))
        row = self.delivery_of(sid, slot)
        self.assertEqual(row["delivery"], "MAILED")
        self.assertEqual(row["delivery_detail"], "mailed to 2 recipient(s)")
        for address in ("bob@example.com", "carol@example.com"):
            got = self.smtp.wait_for(lambda m, a=address: to_of(m) == a and
                                     f"<sub.{sid}." in m["message_id"], what=address)
            self.assertEqual(len(got), 1)
            mail = got[0]
            self.assertIn("Weekly customers", mail["subject"])
            self.assertEqual(mail["attachments"], [])
            self.assertIn("Period: ", mail["text"])
            self.assertIn("ran at 2026-02-02 10:40 Asia/Shanghai", mail["text"])
            self.assertNotIn("attached", mail["text"])
        text = self.mails_to("bob@example.com", sid)[0]["text"]
        link = re.search(r"(http://\S+/downloads/\S+)", text).group(1)
        r = request("GET", link)
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(r.body, self.stored_bytes(task["id"]))
        book = openpyxl.load_workbook(io.BytesIO(r.body), read_only=True)
        rows = list(book.worksheets[0].iter_rows(values_only=True))
        self.assertGreater(len(rows), int(task["totalRows"]))
        # Following the link is audited like any signed link, as the owner.
        audit = self.cluster.db().query(
            "SELECT user_id, via FROM export_download_audit WHERE task_id = ?", (int(task["id"]),))
        self.assertIn({"user_id": "alice", "via": "SIGNED_LINK"}, audit)
        # A forged link is refused.
        self.assertEqual(request("GET", link[:-3] + "AAA").status, 403)
        m = self.cluster.metrics()
        self.assertGreaterEqual(m["export_center_subscription_deliveries_total"], 1)
        self.assertGreaterEqual(m["export_center_mails_total"], 2)

    def test_attach_sends_the_stored_bytes(self):
        task = self.finished_task()
        sid = self.subscription(["dave@example.com"], attach=True)
        slot = 1_770_100_000_000
        self.run_row(sid, slot, task_id=int(task["id"]))
        self.assertEqual(self.delivery_of(sid, slot)["delivery_detail"],
                         "mailed to 1 recipient(s), attached")
        mail = self.smtp.wait_for(lambda m: to_of(m) == "dave@example.com")[0]
        self.assertIn("The file is attached.", mail["text"])
        self.assertEqual(len(mail["attachments"]), 1)
        self.assertEqual(base64.b64decode(mail["attachments"][0]["data_b64"]),
                         self.stored_bytes(task["id"]))
        self.assertTrue(mail["attachments"][0]["filename"].endswith(".xlsx"))

    def test_skip_if_empty_sends_nothing_and_records_it(self):
        task = self.finished_task(parameters={"keyword": "no-customer-has-this-name-zz"})
        self.assertEqual(int(task["totalRows"]), 0)
        sid = self.subscription(["erin@example.com"], skip_if_empty=True)
        slot = 1_770_200_000_000
        self.run_row(sid, slot, task_id=int(task["id"]))
        row = self.delivery_of(sid, slot)
        self.assertEqual((row["delivery"], row["delivery_detail"]), ("SKIPPED_EMPTY", "skipped: empty"))
        time.sleep(1.5)  # several rounds of the duty and the mailer
        self.assertEqual(self.mails_to("erin@example.com", sid), [])
        self.assertEqual(self.cluster.db().query(
            "SELECT COUNT(*) AS n FROM export_mail WHERE subscription_id = ?", (sid,))[0]["n"], 0)

    def test_failures_send_one_notice_per_grace_period(self):
        sid = self.subscription(["frank@example.com"])
        first, second = 1_770_300_000_000, 1_770_303_600_000
        self.run_row(sid, first, outcome="FAILED", detail="the provider answered 503")
        self.assertEqual(self.delivery_of(sid, first)["delivery"], "NOTICE_SENT")
        self.run_row(sid, second, outcome="FAILED", detail="the provider answered 503 again")
        row = self.delivery_of(sid, second)
        self.assertEqual(row["delivery"], "NOTICE_SUPPRESSED")
        self.assertIn("within the grace period", row["delivery_detail"])
        notice = self.smtp.wait_for(lambda m: to_of(m) == "frank@example.com")
        time.sleep(1.5)
        notices = self.mails_to("frank@example.com", sid)
        self.assertEqual(len(notices), 1, notices)
        self.assertIn("Failed: Weekly customers", notice[0]["subject"])
        self.assertIn("the provider answered 503", notice[0]["text"])
        # Past the grace period (moved back by the test) the next failure is told.
        self.cluster.db().execute("UPDATE export_subscription SET failure_notice_at ="
                                  " failure_notice_at - ? WHERE id = ?", (2 * HOUR_MS, sid))
        third = 1_770_307_200_000
        self.run_row(sid, third, outcome="FAILED", detail="the provider answered 500")
        self.assertEqual(self.delivery_of(sid, third)["delivery"], "NOTICE_SENT")
        self.smtp.wait_for(lambda m: to_of(m) == "frank@example.com" and
                           "answered 500" in (m["text"] or ""))
        self.assertEqual(len(self.mails_to("frank@example.com", sid)), 2)

    def test_two_instances_deliver_one_mail_per_run(self):
        task = self.finished_task()
        other, _ = self.cluster.start_extra_center({}, "center-b")
        self.addCleanup(lambda: (other.kill(), other.wait(timeout=30)))
        sid = self.subscription(["gina@example.com"])
        slots = [1_770_400_000_000 + i * HOUR_MS for i in range(8)]
        for slot in slots:
            self.run_row(sid, slot, task_id=int(task["id"]))
        for slot in slots:
            self.assertEqual(self.delivery_of(sid, slot)["delivery"], "MAILED")
        self.smtp.wait_for(lambda m: len(self.mails_to("gina@example.com", sid)) >= len(slots),
                           what="a mail per run")
        time.sleep(2)  # any second mail would have come by now
        got = self.mails_to("gina@example.com", sid)
        self.assertEqual(len(got), len(slots))
        self.assertEqual(len({m["message_id"] for m in got}), len(slots))
        rows = self.cluster.db().query(
            "SELECT status, COUNT(*) AS n FROM export_mail WHERE subscription_id = ?"
            " GROUP BY status", (sid,))
        self.assertEqual(rows, [{"status": "DELIVERED", "n": len(slots)}])

    def test_unsubscribe_removes_the_recipient_and_a_bad_signature_is_refused(self):
        task = self.finished_task()
        sid = self.subscription(["hank@example.com", "ivy@example.com"])
        slot = 1_770_500_000_000
        self.run_row(sid, slot, task_id=int(task["id"]))
        self.delivery_of(sid, slot)
        mail = self.smtp.wait_for(lambda m: to_of(m) == "hank@example.com" and
                                  f"<sub.{sid}." in m["message_id"])[0]
        link = re.search(r"To stop receiving it: (\S+)", mail["text"]).group(1)
        parsed = urllib.parse.urlparse(link)
        query = urllib.parse.parse_qs(parsed.query)
        self.assertEqual(query["r"], ["hank@example.com"])
        # Another recipient's address under hank's signature: refused.
        forged = link.replace("r=hank%40example.com", "r=ivy%40example.com").replace(
            "r=hank@example.com", "r=ivy@example.com")
        for method in ("GET", "POST"):
            r = request(method, forged)
            self.assertEqual(r.status, 403, method)
            self.assertIn(b"not valid", r.body)

        def emails():
            return json.loads(self.cluster.db().query(
                "SELECT delivery_json FROM export_subscription WHERE id = ?",
                (sid,))[0]["delivery_json"])["emails"]
        # Following the link (as a mail scanner does) only asks to confirm.
        r = request("GET", link)
        self.assertEqual(r.status, 200, r.body)
        self.assertIn("text/html", r.headers.get("Content-Type"))
        self.assertIn(b'<form method="post">', r.body)
        self.assertEqual(emails(), ["hank@example.com", "ivy@example.com"])
        # The confirmation (or a one-click POST, RFC 8058) takes hank out.
        r = request("POST", link)
        self.assertEqual(r.status, 200, r.body)
        self.assertIn(b"hank@example.com will receive no more mails", r.body)
        self.assertEqual(emails(), ["ivy@example.com"])
        # Doing it again changes nothing.
        r = request("POST", link)
        self.assertEqual(r.status, 200)
        self.assertIn(b"does not receive", r.body)
        # The next run goes to ivy only.
        self.run_row(sid, slot + HOUR_MS, task_id=int(task["id"]))
        self.assertEqual(self.delivery_of(sid, slot + HOUR_MS)["delivery_detail"],
                         "mailed to 1 recipient(s)")

    def test_a_zh_cn_subscriptions_mail_is_in_chinese(self):
        task = self.finished_task(name="每周客户")
        sid = self.subscription(["kate@example.com"], name="每周客户", locale="zh-CN")
        slot = 1_770_700_000_000  # 2026-02-10 13:06:40 in Shanghai
        self.run_row(sid, slot, task_id=int(task["id"]))
        self.assertEqual(self.delivery_of(sid, slot)["delivery"], "MAILED")
        mail = self.smtp.wait_for(lambda m: to_of(m) == "kate@example.com")[0]
        # The RFC 2047 subject, decoded by Python's email package.
        self.assertEqual(mail["subject"], "[导出中心] 每周客户 — 2026-02-10")
        with open(mail["eml"], "rb") as f:
            self.assertIn(b"Subject: =?UTF-8?B?", f.read())
        self.assertIn("你的订阅“每周客户”（CUSTOMER_LIST，XLSX）已于 2026-02-10 13:06 Asia/Shanghai 运行。",
                      mail["text"])
        self.assertIn("行数：", mail["text"])
        self.assertIn("如不想再收到，请打开以下链接退订：\n", mail["text"])
        self.assertNotIn("Your subscription", mail["text"])

    def test_one_click_unsubscribe_headers_and_their_post(self):
        task = self.finished_task()
        sid = self.subscription(["liam@example.com", "mia@example.com"])
        slot = 1_770_800_000_000
        self.run_row(sid, slot, task_id=int(task["id"]))
        self.delivery_of(sid, slot)
        mail = self.smtp.wait_for(lambda m: to_of(m) == "liam@example.com" and
                                  f"<sub.{sid}." in m["message_id"])[0]
        headers = self.smtp.parsed(mail)
        self.assertEqual(headers["List-Unsubscribe-Post"], "List-Unsubscribe=One-Click")
        header = str(headers["List-Unsubscribe"])
        self.assertRegex(header, r"^<http\S+/subscriptions/\d+/unsubscribe\?r=\S+&sig=\S+>$")
        url = header[1:-1]
        # The header's URL is the footer's link of this recipient.
        self.assertEqual(url, re.search(r"To stop receiving it: (\S+)", mail["text"]).group(1))
        self.assertEqual(urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["r"],
                         ["liam@example.com"])

        def emails():
            return json.loads(self.cluster.db().query(
                "SELECT delivery_json FROM export_subscription WHERE id = ?",
                (sid,))[0]["delivery_json"])["emails"]
        # What a mail client's button sends (RFC 8058 section 3.2).
        r = request("POST", url, raw=b"List-Unsubscribe=One-Click",
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(emails(), ["mia@example.com"])

    def test_zz_over_the_cap_the_file_is_not_attached_and_the_mail_says_so(self):
        c = self.cluster
        c.stop_center()
        c.write_config(mail_overrides(self.smtp.port, cap=1024))
        c.start_center()
        task = self.finished_task()
        size = len(self.stored_bytes(task["id"]))
        self.assertGreater(size, 1024)
        sid = self.subscription(["jack@example.com"], attach=True)
        slot = 1_770_600_000_000
        self.run_row(sid, slot, task_id=int(task["id"]))
        self.assertEqual(self.delivery_of(sid, slot)["delivery_detail"],
                         "mailed to 1 recipient(s), not attached")
        mail = self.smtp.wait_for(lambda m: to_of(m) == "jack@example.com")[0]
        self.assertEqual(mail["attachments"], [])
        self.assertIn("The file is not attached: it is", mail["text"])
        self.assertIn("over the 1.0 KB limit for attachments (mail.attachment-max-bytes)",
                      mail["text"])
        self.assertIn("/downloads/", mail["text"])


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
