"""The lanes (tests/lanes.py) split the whole suite: every collected test is selected by exactly
one of the ``-m`` expressions ``.ci/test`` runs, and the rules put the known kinds in the full lane."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

from tests.lanes import CATEGORIES, FULL_PARTS, LANES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def manifest(tmp_path_factory) -> dict[str, list[str]]:
    """``{nodeid: lane and category markers}`` of a fresh collection of the whole suite."""
    path = tmp_path_factory.mktemp("lanes") / "manifest.json"
    # Not as an xdist worker (the manifest is written by a collecting process of its own).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist"],
                            cwd=ROOT, env={**env, "LANES_MANIFEST": str(path)}, capture_output=True, text=True,
                            timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    collected = int(re.search(r"(\d+) tests? collected", result.stdout).group(1))
    items = json.loads(path.read_text())
    assert len(items) == collected
    return items


def _selects(expression: str, markers: list[str]) -> bool:
    """Whether ``-m expression`` selects a test with ``markers`` (pytest's own parser)."""
    return Expression.compile(expression).evaluate(lambda name, /, **kwargs: name in markers and not kwargs)


def test_ci_runs_the_two_lanes_and_they_split_the_suite(manifest):
    script = (ROOT / ".ci" / "test").read_text()
    spelled = dict(re.findall(r'^(DEFAULT|FULL)_LANE="([^"]+)"$', script, re.M))
    assert spelled == {"DEFAULT": LANES["default"], "FULL": LANES["full"]}
    lanes = {name: {nodeid for nodeid, markers in manifest.items() if _selects(expr, markers)}
             for name, expr in LANES.items()}
    assert not lanes["default"] & lanes["full"]
    assert lanes["default"] | lanes["full"] == set(manifest)
    assert lanes["default"] and lanes["full"]
    # The full lane's two parts (parallel, then serial) split it, and .ci/test spells them.
    parts = dict(re.findall(r'^FULL_(PARALLEL|SERIAL)="([^"]+)"$', script, re.M))
    assert parts == {"PARALLEL": FULL_PARTS["parallel"], "SERIAL": FULL_PARTS["serial"]}
    split = {name: {nodeid for nodeid, markers in manifest.items() if _selects(expr, markers)}
             for name, expr in FULL_PARTS.items()}
    assert not split["parallel"] & split["serial"] and split["parallel"] | split["serial"] == lanes["full"]
    assert split["parallel"] and split["serial"]
    # "full" comes with a category, and a category always brings "full".
    for nodeid, markers in manifest.items():
        assert ("full" in markers) == bool(set(markers) & set(CATEGORIES)), nodeid


@pytest.mark.parametrize("pattern, category", [
    (r"^tests/deploy/", "deploy"),
    (r"^tests/test_\w*browser\w*\.py::", "browser"),
    (r"^tests/test_loadtests_smoke\.py::", "loadsmoke"),
    (r"^apps/core/tests/test_db_faults\.py::", "faults"),
    (r"^apps/core/tests/test_client_leaves\.py::", "faults"),
    (r"^apps/realtime/tests/test_redis_restart\.py::", "faults"),
    (r"^apps/abuse/tests/test_redis_down\.py::", "faults"),
    (r"^apps/databases/tests/test_transactions_crash\.py::", "faults"),
    # the naive build's copies of shared tests: the default lane never starts its session server
    (r"\[(.+-)?naive(-.+)?\]$", "otherbuild"),
    # the pure ASGI build's copies outside the HTTP edge's tests (apps/core/tests/)
    (r"^(?!apps/core/tests/).*\[(.+-)?lean_asgi(-.+)?\]$", "otherbuild"),
], ids=["deploy", "browser", "loadsmoke", "db_faults", "client_leaves", "redis_restart", "redis_down",
        "transactions_crash", "otherbuild", "otherbuild-lean"])
def test_the_rules_put_each_kind_in_the_full_lane(manifest, pattern, category):
    matched = {nodeid: markers for nodeid, markers in manifest.items() if re.search(pattern, nodeid)}
    assert matched, f"no test matches {pattern}: update the table"
    assert all(category in markers and "full" in markers for markers in matched.values()), \
        sorted(n for n, m in matched.items() if category not in m)[:5]



def test_the_build_matrix_runs_each_shared_test_on_three_builds(manifest):
    """Tests on conftest's ``server`` run on the direct protocol (``asgi``), the pure ASGI path
    (``lean_asgi``) and WSGI; the pure ASGI copies of the HTTP edge's tests stay in the default
    lane; the naive build keeps a handful of smoke copies (conftest.EVERY_BUILD)."""
    def copies(build):
        return {n: m for n, m in manifest.items() if re.search(rf"\[(.+-)?{build}(-.+)?\]$", n)}

    lean, naive = copies("lean_asgi"), copies("naive")
    assert any(n.startswith("apps/core/tests/") and "full" not in m for n, m in lean.items())
    assert len(lean) > 10 * len(naive) and 1 <= len(naive) <= 12, (len(lean), len(naive))
    direct = {n for n in copies("asgi") if "lean_asgi" not in n}
    for nodeid in lean:
        assert re.sub(r"lean_asgi", "asgi", nodeid, count=1) in direct, nodeid
