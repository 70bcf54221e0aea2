"""Fixtures for the databases tests: a database with a typed table, built through the API."""

from __future__ import annotations

import itertools

import pytest

_n = itertools.count()

# (kind, params) of the columns of the standard test table.
COLUMNS = [
    ("varchar", {"key": "title", "size": 64, "required": True}),
    ("string", {"key": "note", "size": 20, "required": False, "default": "none"}),
    ("text", {"key": "body", "required": False}),
    ("longtext", {"key": "manual", "required": False}),
    ("integer", {"key": "count", "required": False, "min": 0, "max": 1000}),
    ("bigint", {"key": "big", "required": False}),
    ("float", {"key": "score", "required": False, "min": -10, "max": 10}),
    ("boolean", {"key": "done", "required": False, "default": False}),
    ("datetime", {"key": "due", "required": False}),
    ("email", {"key": "email", "required": False}),
    ("url", {"key": "site", "required": False}),
    ("ip", {"key": "addr", "required": False}),
    ("enum", {"key": "color", "elements": ["red", "green", "blue"], "required": False}),
    ("varchar", {"key": "tags", "size": 16, "required": False, "array": True}),
]


def uid(prefix: str = "x") -> str:
    return f"{prefix}{next(_n)}"


class Tdb:
    """Paths and helpers for one database/table on one live server."""

    def __init__(self, api, prefix: str = "/tablesdb", tables: str = "tables", rows: str = "rows",
                 columns: str = "columns"):
        self.api = api
        self.prefix = prefix
        self.db = uid("db")
        self.table = uid("t")
        self.tables, self.rows_word, self.columns_word = tables, rows, columns

    @property
    def D(self) -> str:
        return f"{self.prefix}/{self.db}"

    @property
    def T(self) -> str:
        return f"{self.D}/{self.tables}/{self.table}"

    @property
    def R(self) -> str:
        return f"{self.T}/{self.rows_word}"

    def call(self, method, path, **kw):
        kw.setdefault("key", True)
        return self.api.call(method, path, **kw)

    def setup(self, *, permissions=None, security=False, columns=COLUMNS, indexes=()):
        r = self.call("POST", self.prefix, json={"databaseId": self.db, "name": "DB"})
        assert r.status_code == 201, r.text
        sec = "rowSecurity" if self.tables == "tables" else "documentSecurity"
        id_key = "tableId" if self.tables == "tables" else "collectionId"
        inline = [{**params, "type": kind} for kind, params in columns]
        r = self.call("POST", f"{self.D}/{self.tables}", json={
            id_key: self.table, "name": "T", "permissions": permissions or [], sec: security,
            self.columns_word: inline, "indexes": list(indexes)})
        assert r.status_code == 201, r.text
        return self

    def add(self, data, row_id="unique()", permissions=None, **kw):
        body = {"rowId" if self.rows_word == "rows" else "documentId": row_id, "data": data}
        if permissions is not None:
            body["permissions"] = permissions
        return self.call("POST", self.R, json=body, **kw)

    def count(self, sql) -> int:
        return sql(
            "SELECT COUNT(*) FROM databases_row r JOIN databases_table t ON t.id = r.table_id "
            "JOIN databases_database d ON d.id = t.database_id JOIN projects_project p ON p.id = d.project_id "
            "WHERE p.uid = %s AND d.uid = %s AND t.uid = %s", (self.api.project.id, self.db, self.table))[0][0]


@pytest.fixture
def tdb(api) -> Tdb:
    return Tdb(api).setup()
