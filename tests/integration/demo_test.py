"""`export-center demo` as a newcomer sees it: the real binaries (the center
on SQLite and local files, the sample customer-service) started by the demo
itself from config/demo.yaml (its ports moved to free ones), in a temp folder.

Checks the console: one numbered line per step, a progress bar per export
that reaches 100 %, no line per HTTP request (the access log is at debug and
the log goes to a file), the demo's own check that every export SUCCEEDED,
and a last step with the page URL that signs in by itself (/#token=...) whose
token works. Then `serve` on the same folder logs the access line at info.

Run: /usr/bin/python3 demo_test.py BUILD_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from harness import API, free_port, request, wait_http  # noqa: E402

BUILD_DIR = None


class Demo(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ec-demo-test-")
        self.center_port, self.service_port = free_port(), free_port()
        with open(os.path.join(REPO, "config", "demo.yaml"), encoding="utf-8") as f:
            text = f.read()
        text = text.replace("port: 8080", f"port: {self.center_port}")
        text = text.replace("port: 8081", f"port: {self.service_port}")
        text = text.replace("127.0.0.1:8081", f"127.0.0.1:{self.service_port}")
        self.config = os.path.join(self.dir, "demo.yaml")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(text)
        self.procs = []

    def tearDown(self):
        for p in self.procs:  # only the processes this test started, by pid
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, *args, stdout_path, stderr_path):
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            p = subprocess.Popen([os.path.join(BUILD_DIR, "export-center"), *args,
                                  "--config", self.config], cwd=self.dir, stdout=out, stderr=err)
        self.procs.append(p)
        return p

    def wait_for_text(self, proc, path, text, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(path, encoding="utf-8", errors="replace") as f:
                content = f.read()
            if text in content:
                return content
            if proc.poll() is not None:
                self.fail(f"exited {proc.returncode} before printing {text!r}:\n{content}")
            time.sleep(0.2)
        self.fail(f"{text!r} not printed in {timeout}s")

    def test_console_shows_steps_and_bars_and_ends_with_the_signed_in_page_url(self):
        out, err = os.path.join(self.dir, "out.txt"), os.path.join(self.dir, "err.txt")
        demo = self.start("demo", stdout_path=out, stderr_path=err)
        console = self.wait_for_text(demo, out, "serving until Ctrl-C", timeout=600)
        print(console, file=sys.stderr)
        lines = console.splitlines()

        steps = [line for line in lines if re.match(r"^\[\d+/\d+\] ", line)]
        self.assertEqual([s.split("]")[0] + "]" for s in steps],
                         ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"], console)
        self.assertIn("export CUSTOMER_LIST", steps[2])
        self.assertIn("export ORDER_LIST", steps[3])
        self.assertIn("ready", steps[4])
        # A bar per export, each ending at 100 % with its rows.
        finished = [line for line in lines if re.search(r"\[#{30}\] 100 %  [\d,]+ rows", line)]
        self.assertEqual(len(finished), 2, console)
        # No line per HTTP request, on either stream.
        with open(err, encoding="utf-8", errors="replace") as f:
            errors = f.read()
        self.assertNotIn("http request_id", console + errors)
        self.assertLess(len(lines), 40, "the console is a page, not a log")

        # The last step: the page URL that signs in by itself, with a working token.
        m = re.search(r"http://127\.0\.0\.1:(\d+)/#token=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\."
                      r"[A-Za-z0-9_-]+)", console)
        self.assertIsNotNone(m, console)
        self.assertEqual(int(m.group(1)), self.center_port)
        token = m.group(2)
        base = f"http://127.0.0.1:{self.center_port}"
        listed = request("GET", base + API + "/export-tasks", token=token).json()
        self.assertEqual(listed["code"], "200", listed)
        self.assertEqual(listed["data"]["total"], "2")
        self.assertEqual({t["status"] for t in listed["data"]["records"]}, {"SUCCEEDED"})
        self.assertEqual(request("GET", base + "/").status, 200)

        # The log went to its file, at info, without access lines.
        with open(os.path.join(self.dir, "var", "export-center-demo.log"), encoding="utf-8") as f:
            log = f.read()
        self.assertIn("task created", log)
        self.assertNotIn("http request_id", log)

        demo.send_signal(signal.SIGTERM)
        self.assertEqual(demo.wait(timeout=60), 0)

        # `serve` keeps the access log at info.
        serve_out, serve_err = os.path.join(self.dir, "serve.out"), os.path.join(self.dir, "serve.err")
        serve = self.start("serve", stdout_path=serve_out, stderr_path=serve_err)
        wait_http(base + "/healthz", serve, timeout=60)
        self.wait_for_text(serve, serve_out, "path=/healthz", timeout=30)


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
