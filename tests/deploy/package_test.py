"""The Debian package (docs/deploy.md#packages), installed the way an operator would.

scripts/package.sh packages the export-center this build made, and the package goes into
a fresh root: a copy-on-write overlay of this machine (every dependency already
installed, `dpkg -i` needs nothing fetched) in a private mount namespace, so the machine
itself never changes and two runs do not meet. In that root:

- install: the binary in /usr/bin, the systemd unit, the alert rules and the upgrade
  notes where docs/deploy.md says; Depends from dpkg-shlibdeps; both files under
  /etc/export-center are dpkg conffiles, root:export-center 0640; the system user
  `export-center` and its state folder /var/lib/export-center (0750, its own);
- `export-center --help`, `export-center --version` (prints the project's version);
- as the package's user, from the unit's working directory: `check` on the installed
  sample configuration passes the `config` step; `migrate` and `check` on a throwaway
  SQLite database in the state folder succeed;
- the operator edits both conffiles: reinstalling the same package keeps the edits, and
  an upgrade whose sample changed (the package rebuilt as <version>-2 with a line added)
  keeps them too under --force-confold, the new sample put beside as .dpkg-dist;
- `dpkg --remove`: the binary, unit, rules and docs gone; configuration, state folder
  and user kept; `dpkg --purge`: those gone too, statoverrides dropped, and nothing left
  in the root that the package made (only dpkg's and the user database's own records).

Run (as root): /usr/bin/python3 package_test.py SOURCE_DIR BUILD_DIR VERSION
"""
import ctypes
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import yaml

SOURCE_DIR, BUILD_DIR, VERSION = sys.argv[1:4]
DEB_VERSION = VERSION + "-1"
USER = "export-center"
STATE = "/var/lib/export-center"
CONF = "/etc/export-center/export-center.yaml"
ENV_FILE = "/etc/export-center/export-center.env"
UNIT = "/usr/lib/systemd/system/export-center.service"
RULES = "/usr/share/export-center/prometheus/export-center.rules.yml"
DOC = "/usr/share/doc/export-center"
CLONE_NEWNS = 0x00020000
CHROOT_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root",
              "DEBIAN_FRONTEND": "noninteractive"}

# What dpkg and the user database write in any install and purge; everything else the
# package made must be gone after the purge.
BOOKKEEPING = ("var/lib/dpkg/", "var/log/", "var/cache/debconf/", "etc/passwd", "etc/group",
               "etc/shadow", "etc/gshadow", "etc/subuid", "etc/subgid", "etc/.pwd.lock")

ROOT = None
UPPER = None
failures = []


def fail(message):
    failures.append(message)
    print("FAIL", message, flush=True)


def expect(condition, message):
    if not condition:
        fail(message)
    return condition


def host(*args, **kwargs):
    return subprocess.run(list(args), check=True, text=True, capture_output=True, **kwargs)


def run(command, user=None, cwd="/", ok=True):
    """Runs a shell command in the fresh root, as root or as `user`."""
    argv = ["chroot", ROOT]
    env = dict(CHROOT_ENV)
    if user:
        argv += ["setpriv", "--reuid", user, "--regid", user, "--init-groups", "--"]
        env["HOME"] = STATE
    argv += ["sh", "-c", f"cd {cwd} && {command}"]
    r = subprocess.run(argv, env=env, text=True, capture_output=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    if ok and r.returncode != 0:
        raise AssertionError(f"`{command}` exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def path(p):
    return ROOT + p


def read(p):
    with open(path(p), encoding="utf-8") as f:
        return f.read()


def source(rel):
    with open(os.path.join(SOURCE_DIR, rel), encoding="utf-8") as f:
        return f.read()


def owner(p):
    st = os.stat(path(p))
    return (run(f"stat -c %U:%G {p}").stdout.strip(), stat.S_IMODE(st.st_mode))


def query(field):
    return run(f"dpkg-query -W -f='${{{field}}}' export-center", ok=False).stdout


def check_steps(output):
    """`check`'s lines, "<status> <step> <detail>", as {step: status} (the worst one)."""
    steps = {}
    for line in output.splitlines():
        if len(line.split()) < 2:
            continue
        status, step = line.split()[:2]
        if steps.get(step) != "FAIL":
            steps[step] = status
    return steps


def make_fresh_root():
    """A private mount namespace with an overlay of / whose writes land in a tmpfs."""
    global ROOT, UPPER
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) (the test needs root with "
                      "CAP_SYS_ADMIN, as the CI machine gives it)")
    host("mount", "--make-rprivate", "/")
    base = tempfile.mkdtemp(prefix="ec-package-test-")
    host("mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", base)
    for d in ("upper", "work", "root"):
        os.mkdir(os.path.join(base, d))
    UPPER, ROOT = os.path.join(base, "upper"), os.path.join(base, "root")
    host("mount", "-t", "overlay", "overlay", "-o",
         f"lowerdir=/,upperdir={UPPER},workdir={base}/work", ROOT)
    host("mount", "--bind", "/dev", path("/dev"))
    host("mount", "-t", "proc", "proc", path("/proc"))
    # Nothing of the host's /tmp or /run (a running systemd's /run/systemd/system would make
    # the maintainer scripts talk to the host's service manager).
    host("mount", "-t", "tmpfs", "tmpfs", path("/tmp"))
    host("mount", "-t", "tmpfs", "tmpfs", path("/run"))
    return base


def leftovers():
    """Paths the root holds after the purge that the machine did not: files the package or
    its scripts made (or removed: a whiteout), outside dpkg's and the user database's."""
    found = []
    for top, dirs, files in os.walk(UPPER):
        for name in dirs + files:
            full = os.path.join(top, name)
            rel = os.path.relpath(full, UPPER)
            if rel.startswith(BOOKKEEPING) or rel in ("tmp", "run", "dev", "proc"):
                continue
            if os.path.isdir(full) and not os.path.islink(full):
                if not os.path.isdir("/" + rel):
                    found.append(rel + "/")
                continue
            found.append(rel)
    return sorted(found)


def install_and_use(deb):
    expect(run("dpkg-query -W export-center", ok=False).returncode != 0,
           "export-center is already installed on this machine; the test installs it itself")
    run(f"dpkg -i {deb}")

    # The package and its metadata.
    expect(query("Status") == "install ok installed", f"status: {query('Status')}")
    expect(query("Version") == DEB_VERSION, f"version {query('Version')}, want {DEB_VERSION}")
    depends = query("Depends")
    expect("adduser" in depends and "libc6" in depends,
           f"Depends lacks adduser or the shared libraries' packages: {depends}")
    conffiles = query("Conffiles")
    for f in (CONF, ENV_FILE):
        expect(f in conffiles, f"{f} is not a conffile: {conffiles!r}")

    # Where each file goes.
    expect(owner("/usr/bin/export-center") == ("root:root", 0o755),
           f"/usr/bin/export-center: {owner('/usr/bin/export-center')}")
    expect(read(RULES) == source("deploy/prometheus/export-center.rules.yml"), RULES)
    expect(read(DOC + "/deploy.md") == source("docs/deploy.md"), DOC + "/deploy.md")
    if os.path.exists(os.path.join(SOURCE_DIR, "CHANGELOG.md")):
        expect(os.path.exists(path(DOC + "/CHANGELOG.md")), "CHANGELOG.md not in " + DOC)
    unit = read(UNIT)
    for line in ("ExecStart=/usr/bin/export-center serve --config " + CONF,
                 "EnvironmentFile=" + ENV_FILE, "User=" + USER, "WorkingDirectory=" + STATE,
                 "KillSignal=SIGTERM", "Restart=on-failure"):
        expect(line in unit.splitlines(), f"the unit lacks {line}")
    r = run("systemd-analyze verify " + UNIT, ok=False)
    expect(r.returncode == 0 and not (r.stdout + r.stderr).strip(),
           f"systemd-analyze verify {UNIT}: {r.returncode}\n{r.stdout}{r.stderr}")
    expect(not os.path.lexists(path("/etc/systemd/system/multi-user.target.wants/"
                                    "export-center.service")), "the package enabled the unit")

    # The user, its state folder, the configuration's owner and mode.
    entry = run(f"getent passwd {USER}", ok=False).stdout.strip().split(":")
    if expect(len(entry) == 7, f"no user {USER}"):
        expect(int(entry[2]) < 1000 and entry[5] == STATE and entry[6] == "/usr/sbin/nologin",
               f"not a system user with home {STATE}: {entry}")
    expect(owner(STATE) == (f"{USER}:{USER}", 0o750), f"{STATE}: {owner(STATE)}")
    for f in (CONF, ENV_FILE):
        expect(owner(f) == (f"root:{USER}", 0o640), f"{f}: {owner(f)}")
    expect(read(CONF) == source("config/export-center.sample.yaml"), CONF)

    # The binary.
    run("export-center --help")
    r = run("export-center --version", ok=False)
    expect(r.returncode == 0 and VERSION in r.stdout,
           f"`export-center --version` exited {r.returncode} and printed "
           f"{(r.stdout + r.stderr).strip()!r}; want {VERSION}")

    # As the service's user, where the unit runs it, with the secrets file loaded as the
    # env file's header says: the installed sample is a valid configuration.
    loaded = f"set -a; . {ENV_FILE}; set +a; "
    r = run(loaded + f"export-center check --config {CONF}", user=USER, cwd=STATE, ok=False)
    expect(check_steps(r.stdout).get("config") == "ok",
           f"check of the installed sample:\n{r.stdout}{r.stderr}")

    # migrate and check against a throwaway SQLite database in the state folder.
    config = yaml.safe_load(source("config/export-center.sample.yaml"))
    for section in ("provider-services", "definitions", "datasources", "customer-service"):
        config.pop(section, None)
    config["database"]["sqlite-path"] = STATE + "/package-test/export-center.db"
    config["storage"]["root"] = STATE + "/package-test/files"
    with open(path("/tmp/throwaway.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f, allow_unicode=True, sort_keys=False)
    run("mkdir package-test", user=USER, cwd=STATE)
    r = run("export-center migrate --config /tmp/throwaway.yaml", user=USER, cwd=STATE)
    expect("schema is up to date (sqlite)" in r.stdout + r.stderr, f"migrate: {r.stdout}")
    expect(owner(STATE + "/package-test/export-center.db")[0] == f"{USER}:{USER}",
           "the database is not the service user's")
    r = run("export-center check --config /tmp/throwaway.yaml", user=USER, cwd=STATE, ok=False)
    steps = check_steps(r.stdout)
    expect(r.returncode == 0 and steps.get("store") == "ok" and steps.get("storage") == "ok",
           f"check after migrate exited {r.returncode}:\n{r.stdout}{r.stderr}")


def edits_survive(deb):
    edited_conf = read(CONF).replace("  level: info\n", "  level: debug   # the operator's\n", 1)
    expect("the operator's" in edited_conf, "the sample has no `level: info` to edit")
    edited_env = read(ENV_FILE) + "EXPORT_CENTER_METRICS_TOKEN=operator-token-0123456789\n"
    with open(path(CONF), "w", encoding="utf-8") as f:
        f.write(edited_conf)
    with open(path(ENV_FILE), "w", encoding="utf-8") as f:
        f.write(edited_env)
    r = run(f"export-center check --config {CONF}", user=USER, cwd=STATE, ok=False)
    expect(check_steps(r.stdout).get("config") == "ok", f"the edit is not valid:\n{r.stdout}")

    # The same package again.
    run(f"dpkg -i {deb}")
    expect(read(CONF) == edited_conf, "reinstalling overwrote the edited configuration")
    expect(read(ENV_FILE) == edited_env, "reinstalling overwrote the edited secrets file")
    for f in (CONF, ENV_FILE):
        expect(owner(f) == (f"root:{USER}", 0o640), f"{f} after reinstall: {owner(f)}")
    expect(os.path.exists(path(STATE + "/package-test/export-center.db")),
           "reinstalling lost the state folder's database")

    # The next release changes the sample: the package rebuilt as <version>-2 with one line
    # more in it. A non-interactive upgrade keeps the operator's file (--force-confold) and
    # puts the new sample beside it.
    run(f"dpkg-deb -R {deb} /tmp/next")
    with open(path("/tmp/next/DEBIAN/control"), encoding="utf-8") as f:
        control = f.read()
    with open(path("/tmp/next/DEBIAN/control"), "w", encoding="utf-8") as f:
        f.write(control.replace(f"Version: {DEB_VERSION}\n", f"Version: {VERSION}-2\n"))
    with open(path("/tmp/next" + CONF), "a", encoding="utf-8") as f:
        f.write("# a line the next release adds\n")
    run("dpkg-deb --root-owner-group -Zgzip -z1 -b /tmp/next /tmp/next.deb >/dev/null")
    run("dpkg -i --force-confold /tmp/next.deb")
    expect(query("Version") == f"{VERSION}-2", f"upgrade: version {query('Version')}")
    expect(read(CONF) == edited_conf, "the upgrade overwrote the edited configuration")
    expect(read(CONF + ".dpkg-dist").endswith("# a line the next release adds\n"),
           "the upgrade did not put the new sample beside the edited one")
    expect(read(ENV_FILE) == edited_env, "the upgrade overwrote the edited secrets file")


def remove_and_purge():
    wants = "/etc/systemd/system/multi-user.target.wants/export-center.service"
    run("systemctl enable export-center.service")
    expect(os.path.islink(path(wants)), f"`systemctl enable` made no {wants}")
    run("dpkg --remove export-center")
    expect(query("Status") == "deinstall ok config-files", f"after remove: {query('Status')}")
    for gone in ("/usr/bin/export-center", UNIT, RULES, DOC):
        expect(not os.path.lexists(path(gone)), f"{gone} left after remove")
    for kept in (CONF, ENV_FILE, STATE + "/package-test/export-center.db"):
        expect(os.path.exists(path(kept)), f"remove deleted {kept}")
    expect(run(f"getent passwd {USER}", ok=False).returncode == 0, "remove deleted the user")
    expect(os.path.islink(path(wants)), "remove deleted the enablement link")

    run("dpkg --purge export-center")
    expect(run("dpkg-query -W export-center", ok=False).returncode != 0
           or query("Status").startswith("unknown ok not-installed"),
           f"after purge: {query('Status')}")
    for gone in ("/etc/export-center", STATE, wants):
        expect(not os.path.lexists(path(gone)), f"{gone} left after purge")
    for db in ("passwd", "group"):
        expect(run(f"getent {db} {USER}", ok=False).returncode != 0, f"{db} {USER} left")
    overrides = run("dpkg-statoverride --list", ok=False).stdout
    expect("export-center" not in overrides, f"statoverrides left: {overrides}")
    left = leftovers()
    expect(not left, f"left in the root after purge: {left}")


def main():
    started = time.monotonic()
    out = os.path.join(BUILD_DIR, "test-artifacts", "package")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "package.sh"), "--build-dir",
                        BUILD_DIR, "--out", out], text=True, capture_output=True, timeout=600)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise AssertionError(f"scripts/package.sh exited {r.returncode}")
    deb = r.stdout.strip().splitlines()[-1]
    packaged = time.monotonic()
    print(f"package.sh: {deb} ({os.path.getsize(deb) // 1024} KiB) in "
          f"{packaged - started:.1f} s", flush=True)

    base = make_fresh_root()
    try:
        shutil.copy(deb, path("/tmp/"))
        deb_in_root = "/tmp/" + os.path.basename(deb)
        phases = (("install and use", lambda: install_and_use(deb_in_root)),
                  ("edits survive", lambda: edits_survive(deb_in_root)),
                  ("remove and purge", remove_and_purge))
        for name, phase in phases:
            phase()
            print(f"{name}: done at {time.monotonic() - started:.1f} s", flush=True)
    finally:
        host("umount", "-R", base)
        os.rmdir(base)
    print(f"install, use, upgrade, purge: {time.monotonic() - packaged:.1f} s; total "
          f"{time.monotonic() - started:.1f} s")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)


if __name__ == "__main__":
    main()
