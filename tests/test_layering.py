"""The import direction of the product: the edge (``backend/``) composes the apps; the apps never
import the edge, and nothing in the product imports the load-test tooling (``loadtests/``).

Core reaches the route table through the ``V1_ROUTER`` setting, and the benchmark routes are
named in ``V1_EXTRA_ENDPOINTS`` by the settings when ``BENCH_APP=1``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports (absolute names), with its line; ``import_string`` paths in
    code are not imports and are not listed."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def _product_files(root: Path, folder: str) -> list[Path]:
    return [p for p in sorted((root / folder).rglob("*.py"))
            if "tests" not in p.relative_to(root).parts and "migrations" not in p.parts]


def _offences(folder: str, forbidden: tuple[str, ...], root: Path = ROOT) -> list[str]:
    out = []
    for path in _product_files(root, folder):
        for line, module in _imports(path):
            if module.split(".")[0] in forbidden:
                out.append(f"{path.relative_to(root)}:{line} imports {module}")
    return out


@pytest.mark.parametrize("folder, forbidden", [
    ("apps", ("backend", "loadtests")),
    ("backend", ("loadtests",)),
])
def test_no_import_against_the_direction(folder, forbidden):
    assert _offences(folder, forbidden) == []


def test_the_check_finds_an_offence(tmp_path):
    """The walker sees both import forms (the test above could not fail otherwise)."""
    bad = tmp_path / "apps" / "x" / "mod.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("import os\nfrom backend.urls import v1_router\nimport loadtests.run\n")
    assert _offences("apps", ("backend", "loadtests"), tmp_path) == [
        "apps/x/mod.py:2 imports backend.urls", "apps/x/mod.py:3 imports loadtests.run"]
