"""Input schemas, built per view (TablesDB names ``tableId``/``rowSecurity``/``columns``,
legacy ``collectionId``/``documentSecurity``/``attributes``). Parameters a route does not
declare are ignored, as Appwrite does (``apps.core.http.params.declared_only``)."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, WithJsonSchema, create_model
from pydantic import Strict as PydanticStrict

from apps.core.domain.ids import ID_PATTERN, NewId
from apps.core.http.inputs import Bool, Float, Int, LooseBool, Strict
from apps.databases.naming import Naming
from apps.databases.relations import ON_DELETE
from apps.databases.relations import TYPES as RELATION_TYPES
from apps.databases.schema import KINDS, PLAIN_KINDS
from apps.databases.services.indexes import TYPES as INDEX_TYPES

Id = Annotated[str, StringConstraints(min_length=1, max_length=36)]
PathId = Annotated[str, StringConstraints(min_length=1, max_length=255)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Text = Annotated[str, StringConstraints(max_length=1024)]
Queries = list[str] | str | None
# Schema-only annotations (the OpenAPI document): the rules the services check in code.
Key = Annotated[str, WithJsonSchema({"type": "string", "maxLength": 36, "pattern": ID_PATTERN})]


def _one_of(*values: str) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", "enum": list(values)})


def _model(model_name: str, /, **fields) -> type[BaseModel]:
    return create_model(model_name, __base__=Strict, **fields)


_LIST = {"queries": (Queries, None), "search": (str | None, None), "total": (LooseBool, True)}
_TX = {"transactionId": (str | None, None)}


def _one_or_many(naming: Naming) -> type[BaseModel]:
    """Base of the create-row body: one row (its ID and ``data``) or a list of rows, which the
    handler checks; the JSON schema (OpenAPI document) states the two forms."""
    forms = [{"required": [naming.row_id, "data"]}, {"required": [naming.rows]}]
    return type(f"{naming.row.capitalize()}OneOrMany", (Strict,), {
        "model_config": ConfigDict(extra="forbid", populate_by_name=True, json_schema_extra={"anyOf": forms})})


@cache
def models(naming: Naming) -> dict[str, type[BaseModel]]:
    """Every input model of one view, by name."""
    t = naming.table_id
    prefix = "TDB" if naming.db_type == "tablesdb" else "Legacy"
    db = {"databaseId": (PathId, ...)}
    tb = {**db, t: (PathId, ...)}
    m = {
        "DatabaseList": _model(f"{prefix}DatabaseList", **_LIST),
        "DatabaseCreate": _model(f"{prefix}DatabaseCreate", databaseId=(NewId, ...), name=(Name, ...),
                                 enabled=(Bool, True), description=(Text, "")),
        "DatabaseRef": _model(f"{prefix}DatabaseRef", **db),
        "DatabaseUpdate": _model(f"{prefix}DatabaseUpdate", **db, name=(Name | None, None),
                                 enabled=(Bool | None, None), description=(Text | None, None)),
        "TableList": _model(f"{prefix}TableList", **db, **_LIST),
        "TableCreate": _model(f"{prefix}TableCreate", **db, **{t: (NewId, ...)}, name=(Name, ...),
                              permissions=(list[str] | None, None), **{naming.security: (LooseBool, False)},
                              enabled=(Bool, True), **{naming.columns: (list[dict[str, Any]] | None, None)},
                              indexes=(list[dict[str, Any]] | None, None), description=(Text, "")),
        "TableRef": _model(f"{prefix}TableRef", **tb),
        "TableUpdate": _model(f"{prefix}TableUpdate", **tb, name=(Name | None, None),
                              permissions=(list[str] | None, None), **{naming.security: (LooseBool | None, None)},
                              enabled=(Bool | None, None), purge=(LooseBool | None, None),
                              description=(Text | None, None)),
        "ColumnList": _model(f"{prefix}ColumnList", **tb, queries=(Queries, None), total=(LooseBool, True)),
        "ColumnRef": _model(f"{prefix}ColumnRef", **tb, key=(PathId, ...)),
        "IndexCreate": _model(f"{prefix}IndexCreate", **tb, key=(Key, ...),
                              type=(Annotated[str, _one_of(*INDEX_TYPES)], ...),
                              **{naming.index_columns: (list[str], ...)}, orders=(list[str | None] | None, None),
                              lengths=(list[Annotated[int, PydanticStrict()] | None] | None, None),
                              description=(Text | None, None)),
        "RowList": _model(f"{prefix}RowList", **tb, queries=(Queries, None), total=(LooseBool, True),
                          ttl=(float | None, None), **_TX),
        "RowCreate": create_model(f"{prefix}RowCreate", __base__=_one_or_many(naming),
                                  **tb, **{naming.row_id: (NewId | None, None)},
                                  data=(dict[str, Any] | None, None), permissions=(list[str] | None, None),
                                  **{naming.rows: (list[Any] | None, None)}, **_TX),
        "RowRef": _model(f"{prefix}RowRef", **tb, **{naming.row_id: (PathId, ...)}, **_TX),
        "RowGet": _model(f"{prefix}RowGet", **tb, **{naming.row_id: (PathId, ...)}, queries=(Queries, None), **_TX),
        "RowWrite": _model(f"{prefix}RowWrite", **tb, **{naming.row_id: (PathId, ...)},
                           data=(dict[str, Any] | None, None), permissions=(list[str] | None, None), **_TX),
        "RowsUpdate": _model(f"{prefix}RowsUpdate", **tb, data=(dict[str, Any] | None, None),
                             queries=(Queries, None), **_TX),
        "RowsUpsert": _model(f"{prefix}RowsUpsert", **tb, **{naming.rows: (list[Any], ...)}, **_TX),
        "RowsDelete": _model(f"{prefix}RowsDelete", **tb, queries=(Queries, None), **_TX),
        "RowsQuery": _model(f"{prefix}RowsQuery", **tb, queries=(Queries, None), total=(LooseBool, True),
                            ttl=(float | None, None), **_TX),
        "RowIncrement": _model(f"{prefix}RowIncrement", **tb, **{naming.row_id: (PathId, ...)},
                               **{naming.column: (PathId, ...)}, value=(int | float | None, None),
                               max=(int | float | None, None), **_TX),
        "RowDecrement": _model(f"{prefix}RowDecrement", **tb, **{naming.row_id: (PathId, ...)},
                               **{naming.column: (PathId, ...)}, value=(int | float | None, None),
                               min=(int | float | None, None), **_TX),
    }
    related_id = f"related{naming.table.capitalize()}Id"
    m["RelationshipCreate"] = _model(f"{prefix}RelationshipCreate", **tb, **{related_id: (PathId, ...)},
                                     type=(Annotated[str, _one_of(*RELATION_TYPES)], ...), twoWay=(Bool, False),
                                     key=(Key | None, None), twoWayKey=(Key | None, None),
                                     onDelete=(Annotated[str, _one_of(*ON_DELETE)], "restrict"),
                                     description=(Text | None, None))
    m["RelationshipUpdate"] = _model(f"{prefix}RelationshipUpdate", **tb, key=(PathId, ...),
                                     onDelete=(str | None, None), newKey=(str | None, None),
                                     description=(Text | None, None))
    tx = {"transactionId": (PathId, ...)}
    m.update({
        "TransactionCreate": _model(f"{prefix}TransactionCreate", ttl=(int, 300)),
        "TransactionList": _model(f"{prefix}TransactionList", queries=(Queries, None)),
        "TransactionRef": _model(f"{prefix}TransactionRef", **tx),
        "TransactionUpdate": _model(f"{prefix}TransactionUpdate", **tx, commit=(Bool, False), rollback=(Bool, False)),
        "TransactionOperations": _model(f"{prefix}TransactionOperations", **tx,
                                        operations=(list[Any] | None, None)),
    })
    for kind in (KINDS[k] for k in PLAIN_KINDS):
        extra: dict[str, Any] = {}
        for p in kind.params:
            if p == "size":
                extra["size"] = (int | None, None)
            elif p in ("min", "max"):
                extra[p] = (Int | Float | None, None)  # Appwrite: strict Integer/FloatValidator
            elif p == "elements":
                extra["elements"] = (list[str] | None, None)
            elif p == "encrypt":
                extra["encrypt"] = (Bool | None, None)
        name = kind.name.capitalize()
        m[f"ColumnCreate.{kind.name}"] = _model(
            f"{prefix}{name}ColumnCreate", **tb, key=(Key, ...), required=(Bool, ...), default=(Any, None),
            array=(Bool, False), description=(Text | None, None), **extra)
        m[f"ColumnUpdate.{kind.name}"] = _model(
            f"{prefix}{name}ColumnUpdate", **tb, key=(PathId, ...), required=(Bool, ...), default=(Any, None),
            newKey=(str | None, None), description=(Text | None, None),
            **{k: v for k, v in extra.items() if k != "encrypt"})
    return m
