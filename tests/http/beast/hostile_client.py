#!/usr/bin/env python3
"""The two HTTP attacks of docs/http-serving.md#memory-per-connection-and-framing against a running center, by hand (not a CTest
test; beast_http_server_hostile_test.cc checks the same in-process):
  1. Transfer-Encoding: gzip with GET /healthz as its body: how many answers come back;
  2. a chunked POST whose chunk-size line never ends, reconnecting when refused, for
     SECONDS (default 20): bytes offered, answers, and the server's VmRSS.
usage: hostile_client.py PORT PID [SECONDS]   (PID: the export-center serve process)"""
import socket, sys, time

port, pid = int(sys.argv[1]), int(sys.argv[2])

def rss_kib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

def chunk_line_flood(seconds=20):
    """One POST whose chunk-size line never ends; reconnect when refused."""
    head = (b"POST /api/platform/v1/files/export-tasks HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n1")
    filler = b"1" * 65536
    before, peak, offered, conns, answers = rss_kib(), 0, 0, 0, {}
    end = time.time() + seconds
    while time.time() < end:
        s = socket.create_connection(("127.0.0.1", port)); conns += 1
        s.settimeout(0.5)
        try:
            s.sendall(head)
            while time.time() < end:
                offered += s.send(filler)
                peak = max(peak, rss_kib())
        except (socket.timeout, OSError):
            pass
        try:
            s.settimeout(1)
            status = s.recv(64).split(b" ")[1].decode()
        except Exception:
            status = "none"
        answers[status] = answers.get(status, 0) + 1
        s.close()
        peak = max(peak, rss_kib())
    after = rss_kib()
    print(f"chunk-size line flood {seconds}s: {offered/2**20:.1f} MiB offered on {conns} "
          f"connections, answers {answers}; RSS {before} -> peak {peak} -> {after} KiB "
          f"(growth {(peak-before)/1024:.2f} MiB)")

def gzip_smuggle():
    second = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    req = (b"POST /api/platform/v1/files/export-tasks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
           b"Content-Type: application/json\r\n\r\n" + second)
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(req)
    s.settimeout(5)
    got = b""
    t0 = time.time()
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except socket.timeout:
        print("  (no close within 5 s)")
    first = got.split(b"\r\n")[0].decode()
    print(f"gzip smuggle: {got.count(b'HTTP/1.1 ')} response(s), closed after "
          f"{time.time()-t0:.2f}s; first line {first!r}; healthz answered: {b'UP' in got}")
    print("  raw:", got[:400])

gzip_smuggle()
chunk_line_flood(int(sys.argv[3]) if len(sys.argv) > 3 else 20)
