"""Live task events under many clients (docs/http-serving.md#live-bodies): opens N
Server-Sent Events streams on a real center (8 workers), measures the center's RSS,
/healthz and the list while they are open, and how long one new task's event takes to
reach every stream. Not a test: prints its figures.

Run: ulimit -n 8192; python3 bench/task_events_bench.py BUILD_DIR [N=1000]
"""
import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from harness import Cluster, request  # noqa: E402

EVENTS = "/api/platform/v1/files/export-tasks/events"


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return -1


def wait_all(socks, needle, timeout):
    """Reads every socket until each has seen `needle`; returns how many did."""
    seen = {s: b"" for s in socks}
    pending = set(socks)
    deadline = time.time() + timeout
    while pending and time.time() < deadline:
        readable, _, _ = select.select(list(pending), [], [], 1)
        for s in readable:
            seen[s] += s.recv(65536)
            if needle in seen[s]:
                pending.discard(s)
    return len(socks) - len(pending)


def timed_ms(fn):
    start = time.time()
    status = fn().status
    return (time.time() - start) * 1000, status


def main(build_dir, n):
    c = Cluster(build_dir, seed=3000, overrides={"server": {
        "threads": 8, "events-max-streams": 5000, "events-max-streams-per-user": 1000,
        "max-connections": 6000, "max-connections-per-address": 5000}}).start()
    try:
        token = c.token("alice", "1")
        before = rss_mb(c.center.pid)
        socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", c.center_port))
            s.sendall(f"GET {EVENTS} HTTP/1.1\r\nHost: x\r\n"
                      f"Authorization: Bearer {token}\r\n\r\n".encode())
            s.setblocking(False)
            socks.append(s)
        opened = wait_all(socks, b": connected", 30)
        print(f"streams open: {opened}/{n}; center RSS {before} MB before, "
              f"{rss_mb(c.center.pid)} MB with them")
        print("healthz with the streams open: %.1f ms (HTTP %d)" %
              timed_ms(lambda: request("GET", c.base + "/healthz")))
        print("task list with the streams open: %.1f ms (HTTP %d)" %
              timed_ms(lambda: request("GET", c.base + "/api/platform/v1/files/export-tasks",
                                       token=token)))
        task_id = c.create(token, parameters={"keyword": "bench"})["data"]["id"]
        start = time.time()
        reached = wait_all(socks, f'"id":"{task_id}"'.encode(), 30)
        print("a new task's event reached %d/%d streams in %.2f s (poll interval 1 s)" %
              (reached, n, time.time() - start))
        for s in socks:
            s.close()
    finally:
        c.cleanup()


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
