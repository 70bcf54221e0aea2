"""Older response formats of the database models (see ``apps.core.http.formats``).

* Below 1.9.0 (Appwrite's V21 filter): ``$sequence`` of rows and documents is an integer, also
  in related rows nested in them.
* Below 1.9.0: the ``bigint`` column type did not exist; such columns are reported as
  ``integer`` (the 1.8 SDKs pick a column model by type and have no bigint model).
* Below 2.0.0: the rows answered for writes staged in a transaction carry empty ``$sequence``,
  ``$createdAt``, ``$updatedAt`` and ``$permissions`` when they lack them: the SDKs built for
  those formats require them (SDK 27 fills them itself).
* Below 2.0.0: a Database carries empty ``policies`` and ``archives``. The Python SDKs built for
  those formats require these two lists (backup settings of Appwrite's cloud), which a
  self-hosted Appwrite never sends, so with it their ``create``/``get``/``list`` of databases
  fail to parse; sending them empty makes those SDKs work.
"""

from __future__ import annotations

from apps.core.http import formats


def cast_sequence(data: dict) -> dict:
    """``$sequence`` as an integer (non-numeric: 0), here and in nested rows (dicts with ``$id``)."""
    if "$sequence" in data:
        value = data["$sequence"]
        data["$sequence"] = int(value) if isinstance(value, (int, str)) and str(value).isdigit() else 0
    for key, value in data.items():
        if isinstance(value, dict) and "$id" in value:
            data[key] = cast_sequence(value)
        elif isinstance(value, list):
            data[key] = [cast_sequence(v) if isinstance(v, dict) and "$id" in v else v for v in value]
    return data


def bigint_as_integer(column: dict) -> dict:
    if column.get("type") == "bigint":
        column["type"] = "integer"
    return column


def _columns_of(key: str):
    def apply(data: dict) -> dict:
        if isinstance(data.get(key), list):
            data[key] = [bigint_as_integer(c) if isinstance(c, dict) else c for c in data[key]]
        return data

    return apply


def staged_row_keys(data: dict) -> dict:
    for key, empty in (("$sequence", "0"), ("$createdAt", ""), ("$updatedAt", ""), ("$permissions", [])):
        data.setdefault(key, empty)
    return data


def database_lists(data: dict) -> dict:
    data.setdefault("policies", [])
    data.setdefault("archives", [])
    return data


def register() -> None:
    formats.register("database", "2.0.0", database_lists, lists={"databaseList": "databases"})
    formats.register(("row", "document"), "2.0.0", staged_row_keys)
    formats.register(("row", "document"), "1.9.0", cast_sequence,
                     lists={"rowList": "rows", "documentList": "documents"})
    formats.register(("column", "columnBigint", "attribute", "attributeBigint"), "1.9.0", bigint_as_integer,
                     lists={"columnList": "columns", "attributeList": "attributes"})
    formats.register("table", "1.9.0", _columns_of("columns"), lists={"tableList": "tables"})
    formats.register("collection", "1.9.0", _columns_of("attributes"), lists={"collectionList": "collections"})
