"""The database routes: TablesDB under ``/tablesdb`` and the legacy Databases
view under ``/databases``, declared once and instantiated per view."""

from __future__ import annotations

from functools import partial, update_wrapper

from apps.core.http.endpoint import Endpoint
from apps.databases.api import containers, rows, schema, transactions
from apps.databases.api.common import fresh_on_rejection
from apps.databases.api.inputs import models
from apps.databases.naming import LEGACY, TABLESDB, Naming
from apps.databases.schema import PLAIN_KINDS


def _h(fn, naming: Naming, **kw):
    bound = partial(fn, naming=naming, **kw)
    update_wrapper(bound, fn)
    return fresh_on_rejection(bound)


def endpoints_for(n: Naming) -> list[Endpoint]:
    """Every endpoint of one view."""
    legacy = n is LEGACY
    i = models(n)
    api = "databases" if legacy else "tablesDB"
    D = n.prefix
    DB = f"{D}/{{databaseId}}"
    T = f"{DB}/{n.tables}/{{{n.table_id}}}"
    R = f"{T}/{n.rows}"
    tables_scope = "collections" if legacy else "tables"
    columns_scope = "attributes" if legacy else "columns"
    rows_scope = "documents" if legacy else "rows"
    Tn, Rn, Cn = n.table.capitalize(), n.row.capitalize(), n.column.capitalize()
    X = f"{D}/transactions"
    rows_read = "rows.read"
    # Before the database routes: "/transactions" would otherwise match "/{databaseId}".
    out = [
        Endpoint("POST", X, _h(transactions.transaction_create, n), f"{api}.createTransaction",
                 scope=f"{rows_scope}.write", input=i["TransactionCreate"], status=201, response="transaction"),
        Endpoint("GET", X, _h(transactions.transaction_list, n), f"{api}.listTransactions", scope=rows_read,
                 input=i["TransactionList"], response="transactionList"),
        Endpoint("GET", f"{X}/{{transactionId}}", _h(transactions.transaction_get, n), f"{api}.getTransaction",
                 scope=rows_read, input=i["TransactionRef"], response="transaction"),
        Endpoint("PATCH", f"{X}/{{transactionId}}", _h(transactions.transaction_update, n),
                 f"{api}.updateTransaction", scope=f"{rows_scope}.write", input=i["TransactionUpdate"],
                 response="transaction"),
        Endpoint("DELETE", f"{X}/{{transactionId}}", _h(transactions.transaction_delete, n),
                 f"{api}.deleteTransaction", scope=f"{rows_scope}.write", input=i["TransactionRef"], status=204),
        Endpoint("POST", f"{X}/{{transactionId}}/operations", _h(transactions.operations_create, n),
                 f"{api}.createOperations", scope=f"{rows_scope}.write", input=i["TransactionOperations"],
                 status=201, response="transaction"),
    ]
    out += [
        Endpoint("GET", D, _h(containers.database_list, n), f"{api}.list", scope="databases.read",
                 input=i["DatabaseList"], response="databaseList"),
        Endpoint("POST", D, _h(containers.database_create, n), f"{api}.create", scope="databases.write",
                 input=i["DatabaseCreate"], status=201, response="database"),
        Endpoint("GET", DB, _h(containers.database_get, n), f"{api}.get", scope="databases.read",
                 input=i["DatabaseRef"], response="database"),
        Endpoint("PUT", DB, _h(containers.database_update, n), f"{api}.update", scope="databases.write",
                 input=i["DatabaseUpdate"], response="database"),
        Endpoint("DELETE", DB, _h(containers.database_delete, n), f"{api}.delete", scope="databases.write",
                 input=i["DatabaseRef"], status=204),
        Endpoint("GET", f"{DB}/{n.tables}", _h(containers.table_list, n), f"{api}.list{Tn}s",
                 scope=f"{tables_scope}.read", input=i["TableList"], response=f"{n.table}List"),
        Endpoint("POST", f"{DB}/{n.tables}", _h(containers.table_create, n), f"{api}.create{Tn}",
                 scope=f"{tables_scope}.write", input=i["TableCreate"], status=201, response=n.table),
        Endpoint("GET", T, _h(containers.table_get, n), f"{api}.get{Tn}", scope=f"{tables_scope}.read",
                 input=i["TableRef"], response=n.table),
        Endpoint("PUT", T, _h(containers.table_update, n), f"{api}.update{Tn}", scope=f"{tables_scope}.write",
                 input=i["TableUpdate"], response=n.table),
        Endpoint("DELETE", T, _h(containers.table_delete, n), f"{api}.delete{Tn}", scope=f"{tables_scope}.write",
                 input=i["TableRef"], status=204),
        Endpoint("GET", f"{T}/{n.columns}", _h(schema.column_list, n), f"{api}.list{Cn}s",
                 scope=f"{columns_scope}.read", input=i["ColumnList"], response=f"{n.column}List"),
        Endpoint("GET", f"{T}/{n.columns}/{{key}}", _h(schema.column_get, n), f"{api}.get{Cn}",
                 scope=f"{columns_scope}.read", input=i["ColumnRef"], response=n.column),
        Endpoint("DELETE", f"{T}/{n.columns}/{{key}}", _h(schema.column_delete, n), f"{api}.delete{Cn}",
                 scope=f"{columns_scope}.write", input=i["ColumnRef"], status=204),
        Endpoint("GET", f"{T}/indexes", _h(schema.index_list, n), f"{api}.listIndexes", scope="indexes.read",
                 input=i["ColumnList"], response="indexList"),
        Endpoint("POST", f"{T}/indexes", _h(schema.index_create, n), f"{api}.createIndex", scope="indexes.write",
                 input=i["IndexCreate"], status=202, response="index"),
        Endpoint("GET", f"{T}/indexes/{{key}}", _h(schema.index_get, n), f"{api}.getIndex", scope="indexes.read",
                 input=i["ColumnRef"], response="index"),
        Endpoint("DELETE", f"{T}/indexes/{{key}}", _h(schema.index_delete, n), f"{api}.deleteIndex",
                 scope="indexes.write", input=i["ColumnRef"], status=204),
        Endpoint("GET", R, _h(rows.row_list, n), f"{api}.list{Rn}s", scope=f"{rows_scope}.read",
                 input=i["RowList"], response=f"{n.row}List"),
        Endpoint("POST", R, _h(rows.row_create, n), f"{api}.create{Rn}", scope=f"{rows_scope}.write",
                 input=i["RowCreate"], abuse=f"{rows_scope}.create", status=201, response=f"{n.row}|{n.row}List"),
        Endpoint("PATCH", R, _h(rows.rows_update, n), f"{api}.update{Rn}s", scope=f"{rows_scope}.write",
                 input=i["RowsUpdate"], abuse=f"{rows_scope}.update", response=f"{n.row}List"),
        Endpoint("PUT", R, _h(rows.rows_upsert, n), f"{api}.upsert{Rn}s", scope=f"{rows_scope}.write",
                 input=i["RowsUpsert"], abuse=f"{rows_scope}.upsert", response=f"{n.row}List"),
        Endpoint("DELETE", R, _h(rows.rows_delete, n), f"{api}.delete{Rn}s", scope=f"{rows_scope}.write",
                 input=i["RowsDelete"], abuse=f"{rows_scope}.delete", response=f"{n.row}List"),
        Endpoint("POST", f"{R}/query", _h(rows.rows_query, n), f"{api}.createQuery", scope=f"{rows_scope}.read",
                 input=i["RowsQuery"], response=f"{n.row}List"),
        Endpoint("PATCH", f"{R}/{{{n.row_id}}}/{{{n.column}}}/increment", _h(rows.row_increment, n),
                 f"{api}.increment{Rn}{Cn}", scope=f"{rows_scope}.write", input=i["RowIncrement"],
                 abuse=f"{rows_scope}.update", response=n.row),
        Endpoint("PATCH", f"{R}/{{{n.row_id}}}/{{{n.column}}}/decrement", _h(rows.row_decrement, n),
                 f"{api}.decrement{Rn}{Cn}", scope=f"{rows_scope}.write", input=i["RowDecrement"],
                 abuse=f"{rows_scope}.update", response=n.row),
        Endpoint("GET", f"{R}/{{{n.row_id}}}", _h(rows.row_get, n), f"{api}.get{Rn}", scope=f"{rows_scope}.read",
                 input=i["RowGet"], response=n.row),
        Endpoint("PATCH", f"{R}/{{{n.row_id}}}", _h(rows.row_update, n), f"{api}.update{Rn}",
                 scope=f"{rows_scope}.write", input=i["RowWrite"], abuse=f"{rows_scope}.update", response=n.row),
        Endpoint("PUT", f"{R}/{{{n.row_id}}}", _h(rows.row_upsert, n), f"{api}.upsert{Rn}",
                 scope=f"{rows_scope}.write", input=i["RowWrite"], abuse=f"{rows_scope}.upsert", response=n.row),
        Endpoint("DELETE", f"{R}/{{{n.row_id}}}", _h(rows.row_delete, n), f"{api}.delete{Rn}",
                 scope=f"{rows_scope}.write", input=i["RowRef"], abuse=f"{rows_scope}.delete", status=204),
    ]
    out.append(Endpoint("POST", f"{T}/{n.columns}/relationship", _h(schema.relationship_create, n),
                        f"{api}.createRelationship{Cn}", scope=f"{columns_scope}.write",
                        input=i["RelationshipCreate"], status=202, response=f"{n.column}Relationship"))
    out.append(Endpoint("PATCH", f"{T}/{n.columns}/{{key}}/relationship", _h(schema.relationship_update, n),
                        f"{api}.updateRelationship{Cn}", scope=f"{columns_scope}.write",
                        input=i["RelationshipUpdate"], response=f"{n.column}Relationship",
                        aliases=(f"{T}/{n.columns}/relationship/{{key}}",)))  # SDK 27's path
    for kind in PLAIN_KINDS:
        title = kind.capitalize()
        out.append(Endpoint("POST", f"{T}/{n.columns}/{kind}", _h(schema.column_create, n, kind=kind),
                            f"{api}.create{title}{Cn}", scope=f"{columns_scope}.write",
                            input=i[f"ColumnCreate.{kind}"], status=202, response=f"{n.column}{title}"))
        out.append(Endpoint("PATCH", f"{T}/{n.columns}/{kind}/{{key}}", _h(schema.column_update, n, kind=kind),
                            f"{api}.update{title}{Cn}", scope=f"{columns_scope}.write",
                            input=i[f"ColumnUpdate.{kind}"], response=f"{n.column}{title}"))
    return out


endpoints = [*endpoints_for(TABLESDB), *endpoints_for(LEGACY)]
