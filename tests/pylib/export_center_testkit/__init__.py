"""The Python helpers shared by every script that drives the built binaries:
the end-to-end tests (tests/integration/harness.py and the tests beside it),
tests/deploy/, scripts/fleet.py and the benchmarks in bench/.

Imported by path, no installation:

    sys.path.insert(0, os.path.join(REPO, "tests", "pylib"))
    from export_center_testkit import ENDED, free_port, request, wait_http

See tests/pylib/README.md.
"""
from .http import Response, request
from .net import free_port, wait_http, wait_until
from .release import previous_release, project_version, releases, source_commit
from .servers import REPO, ScriptServer
from .states import ACTIVE, ENDED, EXPIRED, PROVIDER_ENDED

__all__ = ["ACTIVE", "ENDED", "EXPIRED", "PROVIDER_ENDED", "REPO", "Response", "ScriptServer",
           "free_port", "previous_release", "project_version", "releases", "request",
           "source_commit", "wait_http", "wait_until"]
