"""The suite's two lanes: every collected test is in exactly one.

- The **default lane** (``-m "not full"``) runs in parallel under pytest-xdist: each worker has its
  own test database and its own session servers (see ``conftest.py``).
- The **full lane** (``-m full``) runs after it (:data:`FULL_PARTS`): tests that break processes
  or PostgreSQL/Redis on purpose, start whole deployments or a browser, run the load-test tools, or
  repeat the default lane's behaviour on a build users do not run by default.

A test is in the full lane when it carries one of the :data:`CATEGORIES` markers: written on the
test or its module (``pytestmark``), or given here by a rule on its path, fixtures or parameters,
so that new test files are classified without a list to keep. Every test given a category also
gets the ``full`` marker, which is all the lane expressions look at; ``.ci/test`` runs
:data:`LANES` in turn, and ``tests/test_lanes.py`` checks that they split the whole suite.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# marker -> what it holds (registered in pyproject.toml, where --strict-markers checks them)
CATEGORIES = {
    "faults": "breaks a process, a connection or the shared PostgreSQL/Redis on purpose",
    "deploy": "starts whole deployments (compose, k8s manifests, nginx, the launcher)",
    "browser": "drives Chromium",
    "loadsmoke": "runs the load-test tools against servers of their own",
    "otherbuild": "repeats a behaviour on the naive build (V1_ADAPTER=django), or on the pure ASGI "
                  "build (V1_PROTOCOL=asgi) or the WSGI build (gunicorn) outside the HTTP edge's tests",
    "alone": "needs a server-wide counter of the shared PostgreSQL or Redis to itself",
    "containers": "builds and runs function containers on a real container engine (podman/Docker)",
    "fuzz": "generates requests for every operation of the API document (schemathesis): minutes of CPU, "
            "bounded in time, so it runs where no other worker competes for the cores",
}
# lane -> the pytest -m expression that selects it (.ci/test spells the same two)
LANES = {"default": "not full", "full": "full"}
# The full lane runs in two parts. On the same parallel workers as the default lane: the repeats
# on another build, and the fault, deployment and browser tests (each starts its own processes:
# PostgreSQL, Redis, servers, Chromium). Alone, in one process: the load-test smoke runs and the
# function containers (they time servers and an engine), the tests that read a server-wide counter,
# and the fuzzing (bounded in time, so a competing worker would only make it explore less).
FULL_PARTS = {"parallel": "full and not (loadsmoke or alone or containers or fuzz)",
              "serial": "full and (loadsmoke or alone or containers or fuzz)"}

# Fault tests by file name: database faults, crashes, Redis restarts and outages, clients that leave.
_FAULT_FILE = re.compile(r"test_\w*(fault|crash|restart|redis_down|outage|client_leave)\w*\.py$")
# The parameter values that select the naive build: its name in the suite and its V1_ADAPTER.
_OTHER_BUILD = {"naive", "django"}
# The pure ASGI and the WSGI build's names in the suite (conftest.BUILDS; "wsgi" is also the kind
# that tests starting servers of their own pass): their copies run in the default lane only under
# _EDGE, the HTTP edge (request heads, malformed input, fallback routes, public URL), where their
# protocols and the direct one part ways; elsewhere the same application code answers on every
# build, and they are full-lane copies (CI runs them all, after the default lane).
_EDGE_BUILDS = {"lean_asgi", "wsgi"}
_EDGE = ("apps/core/tests/",)


def categories(item: pytest.Item) -> set[str]:
    """The :data:`CATEGORIES` that the rules (not the item's own markers) give ``item``."""
    rel = item.path.relative_to(ROOT).as_posix() if item.path.is_relative_to(ROOT) else item.path.name
    name = item.path.name
    fixtures = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    found = set()
    if rel.startswith("tests/deploy/"):
        found.add("deploy")
    if "browser" in name or any("chromium" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")):
        found.add("browser")
    if name.startswith("test_loadtests_") and "smoke" in name:
        found.add("loadsmoke")
    if _FAULT_FILE.search(name) or "private_redis" in fixtures:
        found.add("faults")
    values = [v for v in params.values() if isinstance(v, str)]
    if any(v in _OTHER_BUILD for v in values) or (_EDGE_BUILDS & set(values) and not rel.startswith(_EDGE)):
        found.add("otherbuild")
    return found


def lane_markers(item: pytest.Item) -> list[str]:
    """The lane and category markers ``item`` carries (after :func:`pytest_collection_modifyitems`)."""
    return sorted({m.name for m in item.iter_markers()} & {"full", *CATEGORIES})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each item its rule categories and ``full`` when it has any category; runs before
    ``-m`` deselects, so it sees the whole collection. With ``LANES_MANIFEST=<path>`` in the
    environment it writes ``{nodeid: [markers]}`` there (tests/test_lanes.py reads it)."""
    for item in items:
        for category in sorted(categories(item)):
            item.add_marker(category)
        marked = {m.name for m in item.iter_markers()}
        if marked & set(CATEGORIES):
            item.add_marker("full")
        elif "full" in marked:
            raise pytest.UsageError(f"{item.nodeid}: mark a category ({', '.join(CATEGORIES)}), not 'full' alone")
    manifest = os.environ.get("LANES_MANIFEST")
    if manifest and not os.environ.get("PYTEST_XDIST_WORKER"):
        Path(manifest).write_text(json.dumps({item.nodeid: lane_markers(item) for item in items}))
