"""Throwaway servers started by the project's scripts/test-*.sh."""
import os
import shutil
import subprocess
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class ScriptServer:
    """A throwaway server run by one of the project's scripts/test-*.sh
    (test-postgres.sh, test-rocketmq.sh) in its own temp folder: `start`
    returns the address the script prints last, `run("kill")` etc. pass other
    verbs through, `stop` stops it by the pids the script recorded."""

    def __init__(self, script, prefix):
        self.script = os.path.join(REPO, "scripts", script)
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.address = None

    def start(self, timeout=300, env=None):
        """`env`: extra variables for the script (EC_TEST_ROCKETMQ_AUTH...)."""
        out = subprocess.run([self.script, "start", self.dir], check=True, capture_output=True,
                             text=True, timeout=timeout,
                             env=None if env is None else {**os.environ, **env}).stdout
        self.address = out.strip().splitlines()[-1]
        return self.address

    def run(self, verb, timeout=300):
        subprocess.run([self.script, verb, self.dir], check=True, capture_output=True, text=True,
                       timeout=timeout)

    def stop(self):
        if self.address is not None:
            subprocess.run([self.script, "stop", self.dir], check=False, capture_output=True,
                           timeout=120)
            self.address = None
        if os.environ.get("EC_KEEP_TEST_DIR"):
            print("kept", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
