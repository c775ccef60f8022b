"""The shipped alert rules (deploy/prometheus/export-center.rules.yml) name only
metrics the center really exports (docs/observability.md#alerts).

The exported names come from a real center: build/export-center serve and the
sample customer-service, both with config/demo.yaml (paths moved into a temp
folder, free ports, a small seed), run one CUSTOMER_LIST export, and then
/metrics is read: a labelled family such as export_task_completed_total only
shows once it has a series. Each rule's expression is split into
PromQL tokens; every identifier that is not a function, keyword, label or
duration is a metric name and must be among the exported ones.

Run: /usr/bin/python3 alert_rules_test.py BUILD_DIR RULES_FILE
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

BUILD_DIR = None
RULES = None
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "pylib"))
from export_center_testkit import PROVIDER_ENDED, free_port, request, wait_http  # noqa: E402

# PromQL words that are not metric names (aggregation modifiers, set and
# vector-matching operators, the offset/bool modifiers).
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "bool", "offset", "atan2", "inf", "nan"}
# Words after which a parenthesised list holds label names, not expressions.
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<duration>[0-9]+(?:ms|[smhdwy])(?:[0-9]+(?:ms|[smhdwy]))*)
  | (?P<number>(?:0x[0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>==|!=|=~|!~|>=|<=|[-+*/%^(){}\[\],=<>@])
""", re.VERBOSE)


def tokens(expr):
    pos = 0
    out = []
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot read {expr[pos:pos + 20]!r} in {expr!r}")
        pos = m.end()
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
    return out


def metric_names(expr):
    """The metric names a PromQL expression reads."""
    toks = tokens(expr)
    names = set()
    depth_braces = 0   # inside {label matchers}
    label_list = 0     # inside by (...) / on (...): label names
    paren_stack = []   # for each open '(': whether it opened a label list
    for i, (kind, text) in enumerate(toks):
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        prev = toks[i - 1][1] if i > 0 else ""
        if text == "{":
            depth_braces += 1
        elif text == "}":
            depth_braces -= 1
        elif text == "(":
            opens_labels = prev in LABEL_LISTS
            paren_stack.append(opens_labels)
            label_list += opens_labels
        elif text == ")":
            label_list -= paren_stack.pop()
        elif kind == "ident" and not depth_braces and not label_list:
            if text.lower() in KEYWORDS or nxt in ("(", "by", "without"):
                continue  # a keyword, a function call or `sum by (l) (...)`
            names.add(text)
    if depth_braces or paren_stack:
        raise ValueError(f"unbalanced brackets in {expr!r}")
    return names


API = "/api/platform/v1/files"


def http(method, url, token=None, body=None):
    """The body of a 2xx answer as text; AssertionError on any other status."""
    r = request(method, url, token=token, body=body, timeout=10,
                headers={"Content-Type": "application/json"})
    assert 200 <= r.status < 300, f"{method} {url}: {r.status} {r.body[:300]!r}"
    return r.body.decode("utf-8")


def wait_up(url, proc, what):
    try:
        wait_http(url, proc, timeout=120, any_status=False, attempt_timeout=2)
    except RuntimeError as e:
        raise RuntimeError(f"{what}: {e}; see its log") from e


def demo_config(workdir):
    """config/demo.yaml with its files in `workdir`, on free ports."""
    with open(os.path.join(REPO, "config", "demo.yaml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    center_port, provider_port = free_port(), free_port()
    customers = os.path.join(workdir, "customers.db")
    config["server"]["port"] = center_port
    config["database"]["sqlite-path"] = os.path.join(workdir, "center.db")
    config["storage"]["root"] = os.path.join(workdir, "files")
    config["customer-service"].update(
        {"port": provider_port, "sqlite-path": customers, "seed-customers": 300, "seed-orders": 0})
    config["provider-services"]["customer-service"]["base-url"] = f"http://127.0.0.1:{provider_port}"
    for ds in config.get("datasources", {}).values():
        if ds.get("kind") == "sqlite":
            ds["sqlite-path"] = customers
    path = os.path.join(workdir, "config.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f, allow_unicode=True, sort_keys=False)
    return path, center_port, provider_port


def run_one_export(build_dir, config_path, base):
    token = subprocess.check_output(
        [os.path.join(build_dir, "export-center"), "token", "--config", config_path, "--user", "u1",
         "--tenant", "1", "--app", "PLATFORM", "--perm", "platform:customer:export"],
        text=True).strip()
    created = json.loads(http("POST", base + API + "/export-tasks", token,
                              {"exportType": "CUSTOMER_LIST", "parameters": {}, "format": "CSV"}))
    assert created["code"] == "200", created
    task_id = created["data"]["id"]
    deadline = time.time() + 120
    while time.time() < deadline:
        task = json.loads(http("GET", f"{base}{API}/export-tasks/{task_id}", token))["data"]
        if task["status"] in PROVIDER_ENDED:
            return task
        time.sleep(0.2)
    raise AssertionError(f"export {task_id} did not finish: {task}")


def exported_names(build_dir, workdir):
    """The metric names of a demo center's /metrics after one export: every
    family (# TYPE) and every sample name."""
    config_path, center_port, provider_port = demo_config(workdir)
    procs = []
    try:
        for binary, port, args in (("customer-service", provider_port, []),
                                   ("export-center", center_port, ["serve"])):
            with open(os.path.join(workdir, binary + ".log"), "wb") as log:
                procs.append(subprocess.Popen(
                    [os.path.join(build_dir, binary), *args, "--config", config_path],
                    stdout=log, stderr=subprocess.STDOUT))
            wait_up(f"http://127.0.0.1:{port}/healthz", procs[-1], binary)
        base = f"http://127.0.0.1:{center_port}"
        task = run_one_export(build_dir, config_path, base)
        assert task["status"] == "SUCCEEDED", task
        text = http("GET", base + "/metrics")
    finally:
        for proc in reversed(procs):  # each by its own pid
            proc.terminate()
            proc.wait(timeout=60)
    names = set()
    for line in text.splitlines():
        m = re.match(r"# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) ", line)
        if m:
            names.add(m.group(1))
        elif line and not line.startswith("#"):
            names.add(re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group())
    return names


class MetricNamesTest(unittest.TestCase):
    def test_the_expression_reader_finds_metric_names_only(self):
        self.assertEqual(
            metric_names('sum by (type) (increase(a_total{status="FAILED",x=~"b|c"}[10m]))'
                         ' / on (type) group_left (instance) b_total offset 5m > 0.2 and c'),
            {"a_total", "b_total", "c"})
        self.assertEqual(metric_names("x > 100 * 1024 * 1024 and bool y"), {"x", "y"})
        self.assertEqual(metric_names("rate(m[1h30m])"), {"m"})

    def test_every_rule_reads_only_exported_metrics(self):
        with open(RULES, encoding="utf-8") as f:
            groups = yaml.safe_load(f)["groups"]
        workdir = tempfile.mkdtemp(prefix="ec-alert-rules-")
        try:
            exported = exported_names(BUILD_DIR, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        self.assertIn("export_outbox_pending", exported, "no /metrics read")
        rules = [r for g in groups for r in g["rules"]]
        self.assertGreaterEqual(len(rules), 7)
        for rule in rules:
            name = rule.get("alert") or rule.get("record")
            used = metric_names(rule["expr"])
            self.assertTrue(used, f"{name}: reads no metric")
            unknown = used - exported
            self.assertFalse(unknown, f"{name}: {sorted(unknown)} not exported by the center")


if __name__ == "__main__":
    BUILD_DIR = os.path.abspath(sys.argv.pop(1))
    RULES = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
