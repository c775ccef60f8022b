"""A throwaway PostgreSQL or MariaDB server whose clock is libfaketime's: it starts at a
chosen instant and runs `rate` times faster than the real one.

The center reads every slot, lease and deadline from the database clock ({NOW} in its
SQL, DatabaseNowMs), so a server under a fast fake clock lets a test watch an hour of
minute-level schedules in two minutes, across a daylight-saving change, while the
centers themselves run on the real clock (docs/subscriptions.md#across-a-fleet).

How: scripts/test-postgres.sh or test-mariadb.sh runs with
    LD_PRELOAD=libfaketimeMT.so.1 FAKETIME="@<start> x<rate>" FAKETIME_DONT_RESET=1
so the server starts at that instant and runs at that rate. PostgreSQL forks a backend
per connection; they keep the postmaster's clock (FAKETIME_DONT_RESET), which
`check_one_clock` verifies over several connections before a test relies on it; MariaDB
is one process. Everything the server times — sleeps, poll timeouts, statement and
lock-wait timeouts — also passes `rate` times faster: configure the center's durations
in that light (EXPORT_CENTER_TEST_DB_CLOCK_RATE makes the scripts wait `rate` times as
long for the server to come up).
"""
import datetime
import os
import re
import subprocess
import time

from harness import MariaDb  # also puts tests/pylib on the path
from export_center_testkit import ScriptServer  # noqa: E402

FAKETIME_LIBS = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")

SCRIPTS = {"postgres": "test-postgres.sh", "mariadb": "test-mariadb.sh"}


def faketime_library():
    """The libfaketime preload library (scripts/install-deps.sh installs it), or None."""
    return next((p for p in FAKETIME_LIBS if os.path.exists(p)), None)


def shm_entries():
    """libfaketime's shared memory and semaphores in /dev/shm."""
    return {n for n in os.listdir("/dev/shm")
            if re.fullmatch(r"(faketime_shm|sem\.faketime_sem)_[0-9]+", n)}


def epoch_ms(dt):
    return int(dt.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000) \
        if dt.tzinfo is None else int(dt.timestamp() * 1000)


def iso(ms):
    """UTC ISO text of epoch milliseconds, for messages."""
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class FakeClockDatabase:
    """`kind` postgres or mariadb; `start_at` a naive UTC datetime; `rate` an integer."""

    def __init__(self, kind, start_at, rate, prefix="ec-fakeclock-"):
        if kind not in SCRIPTS:
            raise ValueError(f"kind must be one of {sorted(SCRIPTS)}")
        self.kind = kind
        self.start_at = start_at
        self.rate = int(rate)
        self.server = ScriptServer(SCRIPTS[kind], prefix)
        self.url = None
        self.shm_made = set()  # libfaketime's shared memory made while starting

    def start(self):
        lib = faketime_library()
        if lib is None:
            raise RuntimeError("libfaketime is not installed (scripts/install-deps.sh)")
        env = {"LD_PRELOAD": lib,
               "FAKETIME": "@" + self.start_at.strftime("%Y-%m-%d %H:%M:%S") + f" x{self.rate}",
               "FAKETIME_DONT_RESET": "1",
               "EXPORT_CENTER_TEST_DB_CLOCK_RATE": str(self.rate)}
        if self.kind == "postgres":
            # Fewer wake-ups of the background processes, whose sleeps are `rate` times shorter.
            env["EXPORT_CENTER_PG_SERVER_OPTIONS"] = (
                "-c autovacuum=off -c wal_writer_delay=10000ms -c bgwriter_delay=10000ms"
                " -c checkpoint_timeout=1d")
        before = shm_entries()
        try:
            self.url = self.server.start(timeout=300, env=env)
        finally:
            self.shm_made = shm_entries() - before
        return self.url

    def stop(self):
        self.server.stop()
        # libfaketime's shared memory (/dev/shm/faketime_shm_<pid>, sem.faketime_sem_<pid>)
        # outlives a process that ends without its clean-up (the start script's shell, the
        # bootstrap server); a later process with that pid would then fail to start.
        for name in self.shm_made:
            pid = int(name.rsplit("_", 1)[1])
            if not os.path.exists(f"/proc/{pid}"):
                try:
                    os.remove(os.path.join("/dev/shm", name))
                except FileNotFoundError:
                    pass
        self.shm_made = set()

    # ---- the clock ------------------------------------------------------------------

    def _one_reading(self):
        """(database clock in epoch ms, the server-side session id) over a new connection."""
        if self.kind == "postgres":
            out = subprocess.run(
                ["psql", "-X", "-At", "-F", " ", "-d", self.url, "-c",
                 "SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT,"
                 " pg_backend_pid()"],
                check=True, capture_output=True, text=True, timeout=30).stdout
        else:
            db = MariaDb(self.url)
            out = subprocess.run(
                ["mariadb", "--no-defaults", "--protocol=tcp", "-h", db.host, "-P", db.port,
                 "-u", db.user, "--batch", "--skip-column-names", db.database, "-e",
                 "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED), CONNECTION_ID()"],
                check=True, capture_output=True, text=True, timeout=30,
                env={**os.environ, "MYSQL_PWD": db.password}).stdout
        ms, session = out.split()
        return int(ms), int(session)

    def check_one_clock(self, readings=8, pause=0.15):
        """Asserts that the server shows one clock advancing at `rate` to every
        connection: readings over new connections (new backends on PostgreSQL), each
        between the real instants before and after it, must lie within what one clock
        at rate±30 % allows since the first. Returns a summary for the log."""
        samples = []  # (real before, real after, fake ms, session)
        for _ in range(readings):
            before = time.time()
            fake, session = self._one_reading()
            samples.append((before, time.time(), fake, session))
            time.sleep(pause)
        sessions = {s[3] for s in samples}
        if len(sessions) < readings:
            raise AssertionError(f"expected {readings} sessions, got {len(sessions)}")
        first_before, first_after, first_fake, _ = samples[0]
        slack_ms = 1000  # rounding and the time a statement takes to read its clock
        for before, after, fake, session in samples[1:]:
            low = (before - first_after) * 1000 * self.rate * 0.7 - slack_ms
            high = (after - first_before) * 1000 * self.rate * 1.3 + slack_ms
            if not low <= fake - first_fake <= high:
                raise AssertionError(
                    f"session {session} reads {iso(fake)}, {fake - first_fake} ms after the first"
                    f" reading, outside [{low:.0f}, {high:.0f}] for one clock at x{self.rate}:"
                    f" libfaketime does not give the server one clock")
            if fake > epoch_ms(self.start_at) + 86_400_000 or fake < epoch_ms(self.start_at):
                raise AssertionError(f"the server's clock reads {iso(fake)}, not near the fake "
                                     f"start {self.start_at}")
        real = samples[-1][0] - samples[0][1]
        measured = (samples[-1][2] - samples[0][2]) / 1000 / real if real > 0 else 0
        return (f"{len(sessions)} sessions, one clock at x{measured:.1f} (asked x{self.rate}),"
                f" now {iso(samples[-1][2])}")
