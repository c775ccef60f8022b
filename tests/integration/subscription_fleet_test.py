"""Subscriptions fire every slot exactly once across a fleet that is killed and restarted
(issue 48, "How it is checked"; docs/subscriptions.md#across-a-fleet).

The database server (PostgreSQL or MariaDB, scripts/test-*.sh) runs under libfaketime
(fake_clock_db.py): its clock starts at 2026-03-08 06:18 UTC and runs RATE times faster
than the real one, which is checked first over several connections (PostgreSQL forks a
backend per connection). The centers run on the real clock; everything the scheduler
does — which slot is due, the claim, the catch-up window, the run's lease — reads the
database clock, so an hour and a quarter of minute-level schedules, across America/New_York's
change to daylight saving time at 07:00 UTC, passes in about two minutes.

Two `export-center serve` instances on that database; four subscriptions created through
POST /subscriptions by four owners:
  every2    */2 * * * *            UTC
  every5    */5 * * * *            Asia/Shanghai
  ny10      */10 1-3 * * *         America/New_York  (01:x0 EST, 02:x0 does not exist, 03:x0 EDT:
                                                     a wildcard time, nothing made up for the gap)
  nydaily   daily 02:30 (preset)   America/New_York  (02:30 falls in the gap: 03:00 EDT)
While the slots pass (fake UTC): instance a is kill -9'ed at 06:33 and restarted at 06:38, b
at 06:44 and 06:49; at 07:03 both are kill -9'ed and stay down past several slots of every
schedule until 07:15:20; the test ends at 07:24.

Asserted from export_subscription_run, export_task and the API, against an independent
oracle of each schedule (a 5-field cron read in its zone with Python's zoneinfo, with the
documented rules: a fixed time in the spring-forward gap fires once at the first instant
after it and a repeated one at its first occurrence; a wildcard time — minute or hour field
starting with `*` — follows elapsed time: nothing in the gap, both occurrences of a repeated
minute):
  - no run row at an instant its schedule does not fire;
  - every slot that came due while at least one instance was up has its run, CREATED, with
    its own task: the tasks of each owner are exactly the tasks of its CREATED runs (one per
    slot, none twice, none extra), and nothing ends FAILED or stays CLAIMED;
  - of the slots that came due while both were down, at most one has a run — the latest,
    fired after the restart — CREATED when it was fired within the catch-up window (5 min)
    and SKIPPED beyond it, never the burst: every5's 07:15 is CREATED, ny10's 07:10 SKIPPED;
  - ny10 fires at 01:x0 EST before the change and 03:x0 EDT after it, nydaily at 07:00 UTC;
    POST's nextRuns are the oracle's first three slots after the database's now;
  - GET /subscriptions/{id}/runs shows the ledger's rows, and each run's task is readable by
    its owner through GET /export-tasks/{id}.

Run: /usr/bin/python3 subscription_fleet_test.py BUILD_DIR --db postgres|mariadb
"""
import argparse
import datetime
import os
import signal
import sys
import time
import unittest
import zoneinfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_clock_db import FakeClockDatabase, epoch_ms, iso  # noqa: E402
from harness import API, Cluster, deep_merge, free_port, request, wait_http  # noqa: E402

BUILD_DIR = None
DB_KIND = None

RATE = 30  # the database clock runs 30 times faster: a fake minute is 2 s
UTC = datetime.timezone.utc
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


def fake(hh, mm, ss=0):
    """A fake instant on 2026-03-08 (UTC), epoch ms."""
    return epoch_ms(datetime.datetime(2026, 3, 8, hh, mm, ss, tzinfo=UTC))


FAKE_START = datetime.datetime(2026, 3, 8, 6, 18, 0)
DST_CHANGE = fake(7, 0)  # 02:00 EST -> 03:00 EDT
LATEST_CREATE = fake(6, 31)
KILL_A, RESTART_A = fake(6, 33), fake(6, 38)
KILL_B, RESTART_B = fake(6, 44), fake(6, 49)
KILL_BOTH, RESTART_BOTH = fake(7, 3), fake(7, 15, 20)
END = fake(7, 24)

CATCH_UP_MINUTES = 5
MINUTE = 60_000
POLL_MS = 250  # the scheduler's round, real time: 7.5 fake seconds
# A slot that comes due while an instance is up must have its run within this much
# database time (a few rounds, and a run's create).
GRACE_MS = 60_000

# The scheduler reads everything from the database clock, which runs RATE times faster:
# durations the database times are set long so that the center does not fight itself.
OVERRIDES = {
    "database": {"statement-timeout-ms": 3_600_000},
    "consumer": {"lease-seconds": 3600, "heartbeat-seconds": 1, "max-duration-seconds": 86400,
                 "shutdown-grace-seconds": 1},
    "publisher": {"poll-interval-ms": 200, "lease-seconds": 3600},
    "reconciler": {"interval-seconds": 2, "redispatch-grace-seconds": 3600,
                   "sent-stale-seconds": 3600},
    "limits": {"dedupe-window-seconds": 0, "max-active-per-user": 100},
    "subscriptions": {"enabled": True, "min-interval-minutes": 1,
                      "catch-up-window-seconds": CATCH_UP_MINUTES * 60,
                      "poll-interval-ms": POLL_MS},
}

SUBSCRIPTIONS = [
    {"key": "every2", "owner": "fleet-every2", "tenant": "1",
     "schedule": {"cron": "*/2 * * * *"}, "zone": "UTC", "cron": "*/2 * * * *"},
    {"key": "every5", "owner": "fleet-every5", "tenant": "2",
     "schedule": {"cron": "*/5 * * * *"}, "zone": "Asia/Shanghai", "cron": "*/5 * * * *"},
    {"key": "ny10", "owner": "fleet-ny10", "tenant": "1",
     "schedule": {"cron": "*/10 1-3 * * *"}, "zone": "America/New_York",
     "cron": "*/10 1-3 * * *"},
    {"key": "nydaily", "owner": "fleet-nydaily", "tenant": "2",
     "schedule": {"preset": "daily", "time": "02:30"}, "zone": "America/New_York",
     "cron": "30 2 * * *"},
]


# ---- the oracle: a 5-field cron in an IANA zone --------------------------------------------

DAY_NAMES = {n: i for i, n in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}
MONTH_NAMES = {n: i + 1 for i, n in enumerate(
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"])}


def cron_field(text, lo, hi, names=None):
    """The set of values a cron field allows (Vixie cron's grammar)."""
    def value(v):
        v = v.upper()
        return names[v] if names and v in names else int(v)

    out = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/")
            step = int(step_text)
        if part == "*":
            start, end = lo, hi
        elif "-" in part:
            a, b = part.split("-")
            start, end = value(a), value(b)
        else:
            start = value(part)
            end = hi if step != 1 else start
        out.update(range(start, end + 1, step))
    return out


class Cron:
    def __init__(self, expr):
        m, h, dom, mon, dow = expr.split()
        self.minutes = cron_field(m, 0, 59)
        self.hours = cron_field(h, 0, 23)
        self.doms = cron_field(dom, 1, 31)
        self.months = cron_field(mon, 1, 12, MONTH_NAMES)
        self.dows = {d % 7 for d in cron_field(dow, 0, 7, DAY_NAMES)}
        self.dom_star, self.dow_star = dom.startswith("*"), dow.startswith("*")
        # Vixie cron's wildcard jobs (docs/subscriptions.md#schedules): elapsed time.
        self.wildcard_time = m.startswith("*") or h.startswith("*")

    def matches(self, wall):
        """Whether a local wall-clock minute (naive datetime) matches."""
        if wall.minute not in self.minutes or wall.hour not in self.hours:
            return False
        if wall.month not in self.months:
            return False
        dom_ok = wall.day in self.doms
        dow_ok = (wall.isoweekday() % 7) in self.dows
        if self.dom_star or self.dow_star:
            return dom_ok and dow_ok
        return dom_ok or dow_ok


def oracle_slots(expr, zone, after_ms, until_ms):
    """The instants (epoch ms, UTC) in (after_ms, until_ms] at which `expr` read in `zone`
    fires. A fixed time: each UTC minute whose local time matches at its first occurrence,
    plus the first minute after a spring-forward gap when a local time inside the gap
    matches. A wildcard time: each UTC minute whose local time matches, either occurrence."""
    cron, tz = Cron(expr), zoneinfo.ZoneInfo(zone)
    out = []
    u = (after_ms // MINUTE + 1) * MINUTE
    while u <= until_ms:
        local = datetime.datetime.fromtimestamp(u / 1000, tz)
        before = datetime.datetime.fromtimestamp((u - MINUTE) / 1000, tz)
        wall, wall_before = local.replace(tzinfo=None), before.replace(tzinfo=None)
        fires = (local.fold == 0 or cron.wildcard_time) and cron.matches(wall)
        w = wall_before + datetime.timedelta(minutes=1)
        while not fires and not cron.wildcard_time and w < wall:  # minutes a jump skipped
            fires = cron.matches(w)
            w += datetime.timedelta(minutes=1)
        if fires:
            out.append(u)
        u += MINUTE
    return out


def local_text(ms, zone):
    return datetime.datetime.fromtimestamp(ms / 1000, zoneinfo.ZoneInfo(zone)) \
        .strftime("%H:%M %Z")


def parse_iso(text):
    return epoch_ms(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")))


class OracleSelfCheck(unittest.TestCase):
    """The oracle against the documented examples (docs/subscriptions.md#schedules)."""

    def test_documented_daylight_saving_rules(self):
        day = epoch_ms(datetime.datetime(2026, 3, 7, tzinfo=UTC))
        # 02:30 in New York fires at 03:00 EDT on the day of the change, 02:30 on the others.
        self.assertEqual([iso(s) for s in oracle_slots("30 2 * * *", "America/New_York", day,
                                                       day + 3 * 86_400_000)],
                         ["2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z",
                          "2026-03-09T06:30:00.000Z"])
        # 09:00 in New York: 14:00 UTC before the change, 13:00 UTC after.
        self.assertEqual([iso(s) for s in oracle_slots("0 9 * * *", "America/New_York", day,
                                                       day + 2 * 86_400_000)],
                         ["2026-03-07T14:00:00.000Z", "2026-03-08T13:00:00.000Z"])
        # The repeated hour of 2026-11-01 fires once, at its first occurrence (EDT).
        nov = epoch_ms(datetime.datetime(2026, 11, 1, 4, 0, tzinfo=UTC))
        self.assertEqual([iso(s) for s in oracle_slots("30 1 * * *", "America/New_York", nov,
                                                       nov + 4 * 3_600_000)],
                         ["2026-11-01T05:30:00.000Z"])
        # A wildcard time follows elapsed time: hourly at :15 skips the gap's 02:15 and fires
        # both 01:15s of the repeated hour — 60 minutes apart throughout.
        mar = epoch_ms(datetime.datetime(2026, 3, 8, 5, 0, tzinfo=UTC))
        self.assertEqual([iso(s) for s in oracle_slots("15 * * * *", "America/New_York", mar,
                                                       mar + 3 * 3_600_000)],
                         ["2026-03-08T05:15:00.000Z", "2026-03-08T06:15:00.000Z",
                          "2026-03-08T07:15:00.000Z"])
        self.assertEqual([iso(s) for s in oracle_slots("15 * * * *", "America/New_York", nov,
                                                       nov + 3 * 3_600_000)],
                         ["2026-11-01T04:15:00.000Z", "2026-11-01T05:15:00.000Z",
                          "2026-11-01T06:15:00.000Z"])
        # Both day fields restricted: either matches (the 1st and every Monday).
        self.assertEqual(len(oracle_slots("0 9 1 * MON", "UTC", epoch_ms(
            datetime.datetime(2026, 6, 1, tzinfo=UTC)) - 1, epoch_ms(
            datetime.datetime(2026, 6, 30, tzinfo=UTC)))), 5)


# ---- the fleet ---------------------------------------------------------------------------

class Instance:
    """One `export-center serve` on the shared database; kill -9'ed and restarted by pid."""

    def __init__(self, cluster, name):
        self.cluster, self.name = cluster, name
        self.port = free_port()
        over = deep_merge(cluster.overrides, {"server": {"port": self.port}, "instance-id": name})
        self.config = cluster.write_config(over, path=os.path.join(cluster.dir, f"{name}.yaml"))
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def spawn(self):
        self.proc = self.cluster._spawn("export-center", "serve", "--config", self.config,
                                        log=f"{self.name}.log")

    def wait_up(self):
        wait_http(self.base + "/healthz", self.proc, timeout=90, any_status=False)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except Exception:  # noqa: BLE001 - a stuck stop ends as a kill
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None


def unwrap(response):
    """The answer's data: the usual envelope's `data`, or the body itself."""
    body = response.json()
    if isinstance(body, dict) and "code" in body and "data" in body:
        return body["data"]
    return body


class SubscriptionFleet(unittest.TestCase):

    def setUp(self):
        self.started = time.time()
        self.events = []  # (database ms, what), for the report and the up windows

    def tearDown(self):
        print(f"\n  [{self.id().split('.')[-1]}: {time.time() - self.started:.1f}s]",
              file=sys.stderr)

    # ---- clock and fleet helpers ----------------------------------------------------------

    def now(self):
        return self.db.query(f"SELECT {self.db.NOW} AS now")[0]["now"]

    def wait_db(self, target_ms):
        """Sleeps until the database clock reaches target_ms; returns its reading."""
        while True:
            now = self.now()
            if now >= target_ms:
                return now
            time.sleep(min(0.25, max(0.02, (target_ms - now) / RATE / 1000)))

    def note(self, what):
        now = self.now()
        self.events.append((now, what))
        print(f"  {iso(now)}  {what}", file=sys.stderr, flush=True)
        return now

    def start(self, *instances):
        for inst in instances:
            inst.spawn()
        for inst in instances:
            inst.wait_up()
            self.up_since[inst.name] = self.note(f"{inst.name} up")

    def kill(self, *instances):
        when = self.now()  # read before: the instance was up at least until then
        for inst in instances:
            inst.kill()
            self.windows.append((self.up_since.pop(inst.name), when))
        self.events.append((when, "kill -9 " + " and ".join(i.name for i in instances)))
        print(f"  {iso(when)}  kill -9 {' and '.join(i.name for i in instances)}",
              file=sys.stderr, flush=True)
        return when

    def served(self, slot):
        """Whether an instance was up from before `slot` to GRACE_MS after it."""
        return any(a <= slot and slot + GRACE_MS <= b for a, b in self.windows)

    def runs(self, ids):
        return self.db.query(
            "SELECT subscription_id, slot_at, outcome, task_id, instance, claims, detail,"
            " fired_at FROM export_subscription_run WHERE subscription_id IN ("
            + ",".join(str(int(i)) for i in ids) + ") ORDER BY subscription_id, slot_at")

    # ---- the test ------------------------------------------------------------------------

    def test_every_slot_fires_exactly_once_across_kills_and_a_dst_change(self):
        database = FakeClockDatabase(DB_KIND, FAKE_START, RATE, prefix="ec-subfleet-db-")
        self.addCleanup(database.stop)
        url = database.start()
        print(f"\n  database clock: {database.check_one_clock()}", file=sys.stderr)

        db_config = {"kind": "postgres", "postgres-url": url} if DB_KIND == "postgres" \
            else {"kind": "mysql", "mysql-url": url}
        c = Cluster(BUILD_DIR, seed=300, prefix="ec-subfleet-", snapshot_binaries=True,
                    overrides=deep_merge(OVERRIDES, {"database": db_config}))
        self.addCleanup(c.cleanup)
        self.db = c.db()
        c.start_provider()
        a, b = Instance(c, "a"), Instance(c, "b")
        for inst in (a, b):
            self.addCleanup(inst.kill)
        self.up_since, self.windows = {}, []
        self.start(a)  # a migrates the fresh database; then b
        self.start(b)

        subs = self.create_subscriptions(c, a)
        created = self.now()
        self.assertLessEqual(
            created, LATEST_CREATE,
            f"setup took too long: the database clock already reads {iso(created)} (the fake "
            f"clock started at {FAKE_START} UTC and runs x{RATE}); the scenario needs the "
            f"subscriptions before {iso(LATEST_CREATE)}")

        # The choreography, on the database clock.
        self.wait_db(KILL_A)
        self.kill(a)
        self.wait_db(RESTART_A)
        self.start(a)
        self.wait_db(KILL_B)
        self.kill(b)
        self.wait_db(RESTART_B)
        self.start(b)
        self.wait_db(KILL_BOTH)
        both_down = self.kill(a, b)
        restart = self.wait_db(RESTART_BOTH)
        self.note("restarting a and b")
        self.start(a, b)
        self.wait_db(END)

        # Settle: no run still CLAIMED (a run an instance was killed in is taken over once
        # its lease ends), then stop the fleet and read what it did.
        ids = [s["id"] for s in subs]
        deadline = time.time() + 60
        while any(r["outcome"] == "CLAIMED" for r in self.runs(ids)):
            self.assertLess(time.time(), deadline, "runs still CLAIMED a minute after the end")
            time.sleep(0.5)
        settled = self.now()
        api = {s["key"]: self.read_api(a, s) for s in subs}
        for inst in (a, b):
            self.windows.append((self.up_since.pop(inst.name), settled))
            inst.stop()
        rows = self.runs(ids)
        tasks = self.db.query(
            "SELECT id, requested_by, export_type, tenant_id, requested_at FROM export_task"
            " WHERE requested_by IN (" + ",".join("'" + s["owner"] + "'" for s in subs) + ")")

        checked = 0
        by_key = {}
        for sub in subs:
            mine = [r for r in rows if r["subscription_id"] == int(sub["id"])]
            by_key[sub["key"]] = {r["slot_at"]: r for r in mine}
            checked += self.check_subscription(sub, mine, tasks, both_down, restart, settled)
            self.check_api(sub, mine, *api[sub["key"]])

        # The choreography did what it says: slots missed while both were down, one run
        # within the catch-up window and one outside it.
        every5, ny10, nydaily = by_key["every5"], by_key["ny10"], by_key["nydaily"]
        self.assertEqual(every5.get(fake(7, 15), {}).get("outcome"), "CREATED",
                         f"every5's 07:15 slot, missed while both were down, did not run once "
                         f"after the restart: {every5.get(fake(7, 15))}")
        self.assertNotIn(fake(7, 5), every5, "every5's earlier missed slot 07:05 ran (a burst)")
        skipped = ny10.get(fake(7, 10))
        self.assertIsNotNone(skipped, "ny10's 07:10 slot (missed by more than the catch-up "
                                      "window) was not recorded")
        self.assertEqual(skipped["outcome"], "SKIPPED", skipped)
        self.assertTrue(skipped["detail"], f"a SKIPPED run without its reason: {skipped}")
        # New York across the change: 01:x0 EST before 07:00 UTC, 03:x0 EDT from it on.
        before = [s for s in ny10 if s < DST_CHANGE]
        after = [s for s in ny10 if s >= DST_CHANGE]
        self.assertTrue(before and after, f"ny10 ran {sorted(map(iso, ny10))}: not on both sides")
        for s in before:
            local = local_text(s, "America/New_York")
            self.assertTrue(local.startswith("01:") and local.endswith("EST"), (iso(s), local))
        for s in after:
            local = local_text(s, "America/New_York")
            self.assertTrue(local.startswith("03:") and local.endswith("EDT"), (iso(s), local))
        self.assertIn(DST_CHANGE, ny10, "ny10 did not fire at 03:00 EDT (first after the gap)")
        self.assertEqual(sorted(nydaily), [DST_CHANGE],
                         f"daily 02:30 New York should fire once, at 03:00 EDT: "
                         f"{sorted(map(iso, nydaily))}")
        self.assertGreaterEqual(checked, 30, "too few slots were checked to mean much")
        print(f"  {checked} slots checked; {len(rows)} runs, {len(tasks)} tasks; "
              f"ny10 ran at " + ", ".join(local_text(s, "America/New_York") for s in sorted(ny10)),
              file=sys.stderr)

    def create_subscriptions(self, c, inst):
        subs = []
        for spec in SUBSCRIPTIONS:
            token = c.token(spec["owner"], spec["tenant"])
            body = {"exportType": "CUSTOMER_LIST", "format": "CSV",
                    "taskName": f"fleet {spec['key']}", "parameters": {"status": "ACTIVE"},
                    "schedule": spec["schedule"], "timeZone": spec["zone"]}
            before = self.now()
            r = self.api(inst, "POST", "/subscriptions", token, body)
            self.assertEqual(r.status, 201, r.body[:500])
            made = unwrap(r)
            self.assertEqual(made["timeZone"], spec["zone"], made)
            self.assertEqual(made["schedule"]["cron"], spec["cron"], made)
            self.assertEqual(made["state"], "ACTIVE", made)
            # The next runs are read from the database clock, with the zone's rules.
            expected = oracle_slots(spec["cron"], spec["zone"], before,
                                    before + 5 * 86_400_000)[:3]
            got = [parse_iso(t) for t in made["nextRuns"]]
            self.assertEqual([iso(t) for t in got], [iso(t) for t in expected],
                             f"{spec['key']}: nextRuns do not follow the database clock "
                             f"({iso(before)}) and the schedule")
            self.note(f"created {spec['key']} ({spec['cron']} {spec['zone']}) id {made['id']}")
            subs.append({**spec, "id": int(made["id"]), "token": token})
        return subs

    @staticmethod
    def api(inst, method, path, token, body=None):
        return request(method, inst.base + API + path, token=token, body=body)

    def read_api(self, inst, sub):
        """What the API shows of a subscription: it, its runs, and the answers to
        GET /export-tasks/{id} for the tasks of its three newest runs."""
        r = self.api(inst, "GET", f"/subscriptions/{sub['id']}", sub["token"])
        self.assertEqual(r.status, 200, r.body[:500])
        state = unwrap(r)
        r = self.api(inst, "GET", f"/subscriptions/{sub['id']}/runs", sub["token"])
        self.assertEqual(r.status, 200, r.body[:500])
        runs = unwrap(r)["items"]
        task_answers = {}
        for item in runs[:3]:
            if item.get("taskId") is not None:
                t = self.api(inst, "GET", f"/export-tasks/{item['taskId']}", sub["token"])
                task_answers[int(item["taskId"])] = (t.status, t.json())
        return state, runs, task_answers

    # ---- what each subscription must show --------------------------------------------------

    def check_subscription(self, sub, rows, tasks, both_down, restart, settled):
        key, sid = sub["key"], sub["id"]
        created = self.db.query("SELECT created_at FROM export_subscription WHERE id = ?",
                                (sid,))[0]["created_at"]
        slots = oracle_slots(sub["cron"], sub["zone"], created - MINUTE, settled + 10 * MINUTE)
        slot_set = set(slots)
        by_slot = {r["slot_at"]: r for r in rows}
        for r in rows:
            self.assertIn(r["slot_at"], slot_set,
                          f"{key}: a run at {iso(r['slot_at'])} "
                          f"({local_text(r['slot_at'], sub['zone'])}), when its schedule does "
                          f"not fire")
            # Nothing failed, nothing was deferred (no limit is near), and nothing claimed
            # before the fleet settled is left CLAIMED (a stop may cut a run claimed since).
            allowed = ("CREATED", "SKIPPED") + (("CLAIMED",) if r["fired_at"] > settled else ())
            self.assertIn(r["outcome"], allowed, f"{key}: {r}")
            self.assertGreaterEqual(r["fired_at"], r["slot_at"], f"{key}: fired early: {r}")

        # Every slot that came due while an instance was up ran, once, and created its task.
        checked = 0
        for s in slots:
            if s <= created + 2000 or s > settled - GRACE_MS or not self.served(s):
                continue
            checked += 1
            run = by_slot.get(s)
            self.assertIsNotNone(run, f"{key}: the slot {iso(s)} "
                                      f"({local_text(s, sub['zone'])}) came due while an "
                                      f"instance was up and has no run; runs: "
                                      f"{[iso(x) for x in sorted(by_slot)]}")
            self.assertEqual(run["outcome"], "CREATED", f"{key} {iso(s)}: {run}")

        # The slots missed while both were down: the latest alone, per the catch-up window.
        missed = [s for s in slots if both_down < s < restart]
        ran = [s for s in missed if s in by_slot]
        self.assertLessEqual(len(ran), 1, f"{key}: missed slots {[iso(s) for s in ran]} all "
                                          f"ran after the restart: a burst")
        if ran:
            run = by_slot[ran[0]]
            self.assertEqual(ran[0], missed[-1], f"{key}: {iso(ran[0])} ran after the restart, "
                                                 f"not the latest missed slot {iso(missed[-1])}")
            self.assertGreaterEqual(run["fired_at"], restart, run)
            late = run["fired_at"] - run["slot_at"]
            expected = "CREATED" if late <= CATCH_UP_MINUTES * MINUTE else "SKIPPED"
            self.assertEqual(run["outcome"], expected,
                             f"{key}: the missed slot {iso(ran[0])} fired {late / 1000:.0f} s "
                             f"late (catch-up window {CATCH_UP_MINUTES} min): {run}")

        # At most one task per slot: the owner's tasks are exactly those of its runs (but
        # for one a run claimed after the fleet settled may have made before the stop).
        created_runs = [r for r in rows if r["outcome"] == "CREATED"]
        self.assertTrue(all(r["task_id"] is not None for r in created_runs),
                        f"{key}: CREATED without its task: {created_runs}")
        run_tasks = [r["task_id"] for r in created_runs]
        shared = sorted({t for t in run_tasks if run_tasks.count(t) > 1})
        self.assertFalse(shared, f"{key}: runs of different slots share a task: " + str(
            [(iso(r["slot_at"]), r["task_id"]) for r in created_runs if r["task_id"] in shared]))
        owned = {t["id"]: t for t in tasks if t["requested_by"] == sub["owner"]}
        self.assertLessEqual(set(run_tasks), set(owned), f"{key}: a run's task is not there")
        extra = [t for i, t in owned.items() if i not in run_tasks]
        self.assertFalse([t for t in extra if t["requested_at"] <= settled],
                         f"{key}: tasks of the owner without their run (a slot that created "
                         f"two tasks?): {extra}")
        for t in owned.values():
            self.assertEqual((t["export_type"], str(t["tenant_id"])),
                             ("CUSTOMER_LIST", sub["tenant"]), t)
        print(f"  {key}: {len(rows)} runs, {checked} slots due while up checked, "
              f"{len(missed)} missed while down -> "
              + (f"{iso(ran[0])} {by_slot[ran[0]]['outcome']}" if ran else "none run")
              + f"; {len(owned)} tasks", file=sys.stderr)
        return checked

    def check_api(self, sub, rows, state, items, task_answers):
        key = sub["key"]
        self.assertEqual(state["state"], "ACTIVE", f"{key}: {state}")
        self.assertEqual(state["consecutiveFailures"], 0, f"{key}: {state}")
        self.assertTrue(items, f"{key}: GET /subscriptions/{{id}}/runs is empty")
        # Newest first, and the ledger's: the rows up to the API's newest, none left out
        # (a run still CLAIMED when the API was read may have finished since).
        by_slot = {r["slot_at"]: r for r in rows}
        got = [parse_iso(i["slotAt"]) for i in items]
        newest = sorted((s for s in by_slot if s <= got[0]), reverse=True)[:len(items)]
        self.assertEqual([iso(s) for s in got], [iso(s) for s in newest],
                         f"{key}: the API's runs are not the ledger's, newest first")
        for item in items:
            row = by_slot[parse_iso(item["slotAt"])]
            if item["outcome"] == "CLAIMED":
                continue
            self.assertEqual((item["outcome"], str(item.get("taskId"))),
                             (row["outcome"], str(row["task_id"])), f"{key}: {item} vs {row}")
        self.assertTrue(task_answers, f"{key}: no task among the newest runs")
        for task_id, (status, body) in task_answers.items():
            self.assertEqual((status, body.get("code")), (200, "200"),
                             f"{key}: the owner cannot read its run's task {task_id}: {body}")
            self.assertEqual(str(body["data"]["id"]), str(task_id), body)


def main():
    global BUILD_DIR, DB_KIND
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--db", choices=("postgres", "mariadb"), required=True)
    args, rest = parser.parse_known_args()
    BUILD_DIR, DB_KIND = os.path.abspath(args.build_dir), args.db
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
