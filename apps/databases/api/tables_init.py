"""``columns[]`` and ``indexes[]`` given to table create: each is created like its own route."""

from __future__ import annotations

from apps.core.errors import AppwriteError
from apps.databases.naming import Naming
from apps.databases.schema import KINDS
from apps.databases.selectors import meta
from apps.databases.services import columns as column_svc
from apps.databases.services import indexes as index_svc

_BY_FORMAT = {"email": "email", "url": "url", "ip": "ip", "enum": "enum"}
_BY_TYPE = {"double": "float", "float": "float", "linestring": "line"}


def kind_of(spec: dict) -> str:
    """The column kind of a ``columns[]`` item (``type`` plus optional ``format``)."""
    kind = _BY_FORMAT.get(spec.get("format") or "") or _BY_TYPE.get(spec.get("type")) or spec.get("type")
    if kind == "relationship":
        raise AppwriteError("general_argument_invalid", "Invalid `columns` param: create relationship columns with "
                                                        "their own route, once both tables exist")
    if kind not in KINDS:
        raise AppwriteError("general_argument_invalid", f"Invalid `columns` param: unknown type {spec.get('type')!r}")
    return kind


async def create_initial_schema(ctx, naming: Naming, database: dict, table: dict, columns: list,
                                indexes: list) -> dict:
    for spec in columns:
        column = await column_svc.column_create(ctx, naming=naming, table=table, kind=kind_of(spec),
                                                params={k: v for k, v in spec.items() if k not in ("type", "format")})
        table = {**table, "columns": [*table["columns"], column]}
    for spec in indexes:
        await index_svc.index_create(ctx, naming=naming, table=table, key=spec.get("key"), kind=spec.get("type"),
                                     columns=spec.get(naming.index_columns) or spec.get("columns") or [],
                                     orders=spec.get("orders"), lengths=spec.get("lengths"))
        _, table = await meta.table_meta(ctx, database_uid=database["uid"], table_uid=table["uid"])
    _, table = await meta.table_meta(ctx, database_uid=database["uid"], table_uid=table["uid"])
    return table
