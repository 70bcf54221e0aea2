"""Appwrite response models for both views: Database, Table/Collection,
Column/Attribute, ColumnIndex/Index, Row/Document and their lists."""

from __future__ import annotations

from apps.core.domain.timefmt import iso_stored
from apps.core.drivers.db import as_json
from apps.databases.naming import TABLESDB, Naming
from apps.databases.relations import visible
from apps.databases.schema import FLOAT_MAX, INT_MAX, INT_MIN, KINDS

_ts = iso_stored


def database_model(d: dict) -> dict:
    return {"$id": d["uid"], "name": d["name"], "description": d["description"] or "",
            "$createdAt": _ts(d["created_at"]), "$updatedAt": _ts(d["updated_at"]),
            "enabled": d["enabled"], "type": d["type"] if d["type"] in ("tablesdb", "legacy") else "tablesdb"}


def column_model(c: dict, naming: Naming = TABLESDB) -> dict:
    """Column and Attribute JSON (identical in both views but for a relationship's
    ``relatedTable``/``relatedCollection``). Always has ``status``."""
    kind = KINDS[c["kind"]]
    spec = c["spec"]
    out = {"key": c["key"], "description": "", "type": kind.type, "status": "available", "error": "",
           "required": c["required"], "array": c["array"],
           "$createdAt": _ts(c["created_at"]), "$updatedAt": _ts(c["updated_at"])}
    if kind.name == "relationship":
        out[f"related{naming.table.capitalize()}"] = spec["relatedTable"]
        out.update({k: spec[k] for k in ("relationType", "twoWay", "twoWayKey", "onDelete", "side")})
        return out
    if kind.format:
        out["format"] = kind.format
    if kind.base == "string":
        out["size"] = c["size"] if c["size"] is not None else 0
    if kind.base == "integer":
        out["min"] = spec.get("min", INT_MIN)
        out["max"] = spec.get("max", INT_MAX)
    if kind.base == "float":
        out["min"] = spec.get("min", -FLOAT_MAX)
        out["max"] = spec.get("max", FLOAT_MAX)
    if kind.name == "enum":
        out["elements"] = spec.get("elements", [])
    if "encrypt" in kind.params:
        out["encrypt"] = bool(spec.get("encrypt", False))
    out["default"] = spec.get("default")
    return out


def index_model(naming: Naming, i: dict) -> dict:
    return {"$id": i["key"], "$createdAt": _ts(i["created_at"]), "$updatedAt": _ts(i["updated_at"]),
            "key": i["key"], "description": "", "type": i["type"], "status": "available", "error": "",
            naming.index_columns: i["columns"], "lengths": i["lengths"] or [], "orders": i["orders"]}


def table_model(naming: Naming, database: dict, t: dict) -> dict:
    return {"$id": t["uid"], "$createdAt": _ts(t["created_at"]), "$updatedAt": _ts(t["updated_at"]),
            "$permissions": t["permissions"], "databaseId": database["uid"], "name": t["name"],
            "description": t["description"] or "", "enabled": t["enabled"], naming.security: t["row_security"],
            naming.columns: [column_model(c, naming) for c in t["columns"] if visible(c)],
            "indexes": [index_model(naming, i) for i in t["indexes"]], "bytesMax": 0, "bytesUsed": 0}


def row_model(naming: Naming, database: dict, table: dict, row: dict, select: list[str] | None = None,
              related: dict | None = None) -> dict:
    """Row/Document JSON: system keys, then every column (``null`` when unset), or only the
    selected ones. ``$sequence`` is a string (the SDK fails on an int).
    Relationship columns appear only when loaded (``related``: key -> rendered row(s))."""
    data = as_json(row["data"]) or {}
    out = {"$id": row["uid"], "$sequence": str(row["id"]), naming.row_table_key: table["uid"],
           "$databaseId": database["uid"], "$createdAt": _ts(row["created_at"]),
           "$updatedAt": _ts(row["updated_at"]), "$permissions": as_json(row["permissions"]) or []}
    if select is None or "*" in select:
        for c in table["columns"]:
            if c["kind"] != "relationship":
                out[c["key"]] = data.get(c["key"])
    else:
        for key in select:
            if not key.startswith("$") and "." not in key:
                out[key] = data.get(key)
    if related:
        out.update(related)
    return out


def transaction_model(t: dict) -> dict:
    """Transaction JSON (Appwrite 1.8): ``$id, $createdAt, $updatedAt, status, operations,
    expiresAt``."""
    return {"$id": t["uid"], "$createdAt": _ts(t["created_at"]), "$updatedAt": _ts(t["updated_at"]),
            "status": t["status"], "operations": int(t["operations"]), "expiresAt": _ts(t["expires_at"])}
