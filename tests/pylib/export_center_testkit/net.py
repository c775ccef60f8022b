"""Loopback ports and waiting for a server to answer."""
import socket
import time
import urllib.error
import urllib.request


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0,
    then released) for a server this script is about to start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, proc=None, timeout=180, any_status=True, interval=0.1, attempt_timeout=1):
    """Polls `url` until it answers. With any_status (the default) any HTTP
    answer, 5xx included, means up; otherwise only a 2xx/3xx does. Raises
    RuntimeError when `proc` (a subprocess.Popen, optional) exits first or
    when `timeout` seconds pass."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=attempt_timeout):
                return
        except urllib.error.HTTPError:
            if any_status:
                return
            time.sleep(interval)
        except OSError:
            time.sleep(interval)
    raise RuntimeError(f"{url} did not answer in {timeout}s")


def wait_until(predicate, timeout=60, interval=0.1, what="condition"):
    """Calls predicate() until it returns something true, and returns that;
    AssertionError naming `what` after `timeout` seconds."""
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.time() >= deadline:
            raise AssertionError(f"{what} not reached in {timeout}s")
        time.sleep(interval)
