"""The two views of the same data: TablesDB (primary) and the legacy Databases API.

Handlers, services and response models are written once and take a :class:`Naming` that says
how the view spells things: path segments, parameter and model keys, error types and scopes
(collections/documents/attributes vs tables/rows/columns).
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.core.errors import AppwriteError


@dataclass(frozen=True, slots=True)
class Naming:
    db_type: str  # Database.type of databases created through this view
    prefix: str  # "/tablesdb" or "/databases"
    table: str  # "table" / "collection"
    row: str  # "row" / "document"
    column: str  # "column" / "attribute"
    table_id: str  # "tableId" / "collectionId"
    row_id: str  # "rowId" / "documentId"
    security: str  # "rowSecurity" / "documentSecurity"
    index_columns: str  # "columns" / "attributes" (index create param and Index model key)
    row_table_key: str  # "$tableId" / "$collectionId"

    @property
    def tables(self) -> str:
        return self.table + "s"

    @property
    def rows(self) -> str:
        return self.row + "s"

    @property
    def columns(self) -> str:
        return self.column + "s"

    def error(self, entity: str, problem: str, message: str | None = None) -> AppwriteError:
        """The view's error for ``entity`` (``table``/``row``/``column``) and ``problem``
        (``not_found``, ``already_exists``, ``invalid_structure``...)."""
        word = {"table": self.table, "row": self.row, "column": self.column}.get(entity, entity)
        return AppwriteError(f"{word}_{problem}", message)


TABLESDB = Naming(
    db_type="tablesdb", prefix="/tablesdb", table="table", row="row", column="column",
    table_id="tableId", row_id="rowId", security="rowSecurity", index_columns="columns",
    row_table_key="$tableId",
)
LEGACY = Naming(
    db_type="legacy", prefix="/databases", table="collection", row="document", column="attribute",
    table_id="collectionId", row_id="documentId", security="documentSecurity", index_columns="attributes",
    row_table_key="$collectionId",
)
