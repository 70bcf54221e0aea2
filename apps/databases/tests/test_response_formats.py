"""Older clients get older model shapes (X-Appwrite-Response-Format): over HTTP on the three
builds, and with an official Python SDK of the Appwrite 1.8 line (appwrite 16.0.0 from PyPI,
installed into the test's temporary directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from apps.databases.tests.conftest import Tdb

OLD_SDK = "appwrite==16.0.0"  # the last Python SDK release built for response format 1.8.0

COLUMNS = [("varchar", {"key": "title", "size": 32, "required": True}), ("bigint", {"key": "big", "required": False})]


def test_row_models_by_format(server, project):
    from conftest import Api

    t = Tdb(Api(server, project)).setup(columns=COLUMNS)
    assert t.add({"title": "a", "big": 2**40}, row_id="r1").status_code == 201

    def get(path, fmt=None):
        r = t.call("GET", path, headers={"X-Appwrite-Response-Format": fmt} if fmt else {})
        assert r.status_code == 200, r.text
        return r

    assert isinstance(get(f"{t.R}/r1").json()["$sequence"], str)  # the current (1.9) shape
    old = get(f"{t.R}/r1", "1.8.0").json()
    assert isinstance(old["$sequence"], int) and old["big"] == 2**40
    assert all(isinstance(r["$sequence"], int) for r in get(t.R, "1.8.0").json()["rows"])
    assert isinstance(get(f"{t.R}/r1", "1.9.0").json()["$sequence"], str)
    newer = get(f"{t.R}/r1", "2.5.0")
    assert isinstance(newer.json()["$sequence"], str) and "X-Appwrite-Warning" not in newer.headers
    assert get(f"{t.T}/columns/big").json()["type"] == "bigint"
    assert get(f"{t.T}/columns/big", "1.8.0").json()["type"] == "integer"
    assert [c["type"] for c in get(f"{t.T}/columns", "1.8.0").json()["columns"]] == ["varchar", "integer"]
    assert [c["type"] for c in get(t.T, "1.8.0").json()["columns"]] == ["varchar", "integer"]
    legacy = Tdb(Api(server, project), prefix="/databases", tables="collections", rows="documents",
                 columns="attributes").setup(columns=COLUMNS)
    assert legacy.add({"title": "d"}, row_id="d1").status_code == 201
    assert isinstance(get(f"{legacy.R}/d1", "1.8.0").json()["$sequence"], int)
    assert [a["type"] for a in get(legacy.T, "1.8.0").json()["attributes"]] == ["varchar", "integer"]
    bad = t.call("GET", f"{t.R}/nope", headers={"X-Appwrite-Response-Format": "1.8.0"})
    assert bad.status_code == 404 and bad.json()["type"] == "row_not_found"
    junk = t.call("GET", f"{t.R}/r1", headers={"X-Appwrite-Response-Format": "latest"})
    assert junk.status_code == 200 and isinstance(junk.json()["$sequence"], str)


_SCRIPT = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import appwrite
from appwrite.client import Client
from appwrite.id import ID
from appwrite.query import Query
from appwrite.services.tables_db import TablesDB

endpoint, project, key = sys.argv[1:4]
client = Client().set_endpoint(endpoint).set_project(project).set_key(key)
raw = []
original = client.call
def spy(*args, **kwargs):
    out = original(*args, **kwargs)
    raw.append(out)
    return out
client.call = spy
tables = TablesDB(client)
db = tables.create(ID.unique(), "Old SDK")
table = tables.create_table(db.id, ID.unique(), "items")
tables.create_varchar_column(db.id, table.id, "title", 32, True)
tables.create_integer_column(db.id, table.id, "qty", False)
row = tables.create_row(db.id, table.id, ID.unique(), {"title": "one", "qty": 1})
listed = tables.list_rows(db.id, table.id, queries=[Query.equal("title", "one")])
got = tables.get_row(db.id, table.id, row.id)
tx = tables.create_transaction()
tables.create_row(db.id, table.id, ID.unique(), {"title": "two"}, transaction_id=tx.id)
committed = tables.update_transaction(tx.id, commit=True)
print(json.dumps({
    "sdk": appwrite.__file__,
    "sequence": [row.sequence, listed.rows[0].sequence, got.sequence],
    "raw_sequence_types": [type(r.get("$sequence")).__name__ for r in raw if isinstance(r, dict) and "$sequence" in r],
    "columns": [c.type for c in tables.list_columns(db.id, table.id).columns],
    "committed": committed.status,
    "total": tables.list_rows(db.id, table.id).total,
}))
'''


def test_python_sdk_of_the_18_line(request, tmp_path, project):
    target = tmp_path / "sdk18"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                          OLD_SDK], capture_output=True, text=True, timeout=300)
    if pip.returncode != 0:
        pytest.skip(f"cannot install {OLD_SDK} from the package index: {pip.stderr[-500:]}")
    for kind in ("asgi", "wsgi"):
        server = request.getfixturevalue(f"{kind}_server")
        env = {**os.environ, "PYTHONPATH": str(target)}
        out = subprocess.run([sys.executable, "-c", _SCRIPT, server.endpoint, project.id, project.key],
                             capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-3000:]
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        assert seen["sdk"].startswith(str(target))  # the 1.8-line SDK, not the venv's 27
        assert all(isinstance(s, float) for s in seen["sequence"]), seen
        assert seen["raw_sequence_types"] and set(seen["raw_sequence_types"]) == {"int"}, seen
        assert seen["columns"] == ["varchar", "integer"]
        assert seen["committed"] == "committed" and seen["total"] == 2
