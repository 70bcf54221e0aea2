"""Creating, updating and deleting relationship columns (both sides at once).

Rules (Appwrite ``Attributes/Relationship/Create.php`` and ``Database::createRelationship``):
``key`` defaults to the related table's ID and ``twoWayKey`` to this table's; the key must be
free in this table and the two-way key in the related one (409 ``column_already_exists``), also
for a one-way relationship, whose child side is kept hidden; a second many-to-many between the
same two tables is refused (409); the related table must exist in the same database (404). Each
side that stores links gets an SQL index over them: unique for one-to-one (a row can be linked
from at most one row: a second link is 409 ``row_already_exists``), a GIN index for a
many-to-many list on PostgreSQL.
"""

from __future__ import annotations

from apps.core.drivers.db import UniqueViolation, now, present, races
from apps.core.errors import AppwriteError, invalid_argument
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.relations import ON_DELETE, TYPES, Rel
from apps.databases.schema import MAX_COLUMNS, check_key, column_from_row
from apps.databases.selectors import meta


def index_name(table_pk: int, column_pk: int) -> str:
    return f"rdx_{int(table_pk)}_{int(column_pk)}"


def _index_sql(db, table_pk: int, column_pk: int, rel: Rel) -> str | None:
    if not rel.stored:
        return None
    name, where = index_name(table_pk, column_pk), f"WHERE table_id = {int(table_pk)}"
    if rel.many:
        if not dialect.is_pg(db):
            return None
        return f"CREATE INDEX {name} ON {dialect.ROWS} USING gin ((data->'{rel.key}') jsonb_path_ops) {where}"
    unique = "UNIQUE " if rel.type == "oneToOne" else ""
    expr = dialect.data_text_expr(db, rel.key).replace("r.data", "data")
    return f"CREATE {unique}INDEX {name} ON {dialect.ROWS} (({expr})) {where}"


def _spec(related: dict, type: str, two_way: bool, two_way_key: str, on_delete: str, side: str, hidden: bool) -> dict:
    return {"relatedTable": related["uid"], "relatedTablePk": related["id"], "relationType": type, "twoWay": two_way,
            "twoWayKey": two_way_key, "onDelete": on_delete, "side": side, "hidden": hidden}


async def relationship_create(ctx, *, naming: Naming, database: dict, table: dict, related_uid: str, type: str,
                              two_way: bool, key: str | None, two_way_key: str | None, on_delete: str) -> dict:
    """Create a relationship from ``table`` to ``related_uid``; returns the parent-side column.

    Raises 400 ``general_argument_invalid`` (type, onDelete, keys), 404 ``table_not_found``,
    409 ``column_already_exists``, 400 ``column_limit_exceeded``.
    """
    if type not in TYPES:
        raise invalid_argument("type", f"Value must be one of ({', '.join(TYPES)})")
    if on_delete not in ON_DELETE:
        raise invalid_argument("onDelete", f"Value must be one of ({', '.join(ON_DELETE)})")
    key = check_key(key or related_uid, "key")
    two_way_key = check_key(two_way_key or table["uid"], "twoWayKey")
    _, related = await meta.table_meta(ctx, database_uid=database["uid"], table_uid=related_uid)
    if related is None:
        raise naming.error("table", "not_found", f"Related {naming.table} \"{related_uid}\" could not be found.")
    same = related["id"] == table["id"]
    if same and key.lower() == two_way_key.lower():
        raise naming.error("column", "already_exists",
                           f"A relationship of a {naming.table} with itself needs different key and twoWayKey.")
    if any(c["key"].lower() == key.lower() for c in table["columns"]):
        raise naming.error("column", "already_exists", f'{naming.column.capitalize()} "{key}" already exists.')
    if any(c["key"].lower() == two_way_key.lower() for c in related["columns"]):
        raise naming.error("column", "already_exists",
                           f'{naming.column.capitalize()} "{two_way_key}" already exists in the related {naming.table}.')
    if type == "manyToMany" and any(r.type == "manyToMany" and r.related_pk == related["id"]
                                    for r in relations.rels(table)):
        raise naming.error("column", "already_exists",
                           f'Creating more than one "manyToMany" relationship on the same {naming.table} is currently '
                           "not permitted.")
    if len(table["columns"]) >= MAX_COLUMNS or len(related["columns"]) >= MAX_COLUMNS:
        raise naming.error("column", "limit_exceeded")
    ts = ctx.db.dt(now())
    sides = [(table, key, _spec(related, type, two_way, two_way_key, on_delete, "parent", False)),
             (related, two_way_key, _spec(table, type, two_way, key, on_delete, "child", not two_way))]
    insert = ('INSERT INTO databases_column (table_id, key, kind, required, "array", size, spec, created_at, '
              "updated_at) VALUES (%s, %s, 'relationship', %s, %s, %s, %s, %s, %s) RETURNING *")
    try:
        async with ctx.db.transaction() as tx:
            await meta.lock_tables(tx, naming, [table, related])  # 404 if either was deleted meanwhile
            created = []
            for owner, column_key, spec in sides:
                row = await tx.fetchone(insert, (owner["id"], column_key, False, False, None, tx.json(spec), ts, ts))
                created.append((owner, column_from_row(row)))
            for owner, column in created:
                statement = _index_sql(tx, owner["id"], column["id"], relations.of(column))
                if statement:
                    await tx.execute(statement)
    except UniqueViolation:
        raise naming.error("column", "already_exists") from None
    await meta.forget_table(ctx, table)
    await meta.forget_table(ctx, related)
    return created[0][1]


async def _sides(ctx, naming: Naming, table: dict, column: dict) -> tuple[dict, dict, dict]:
    """``(related table, this side's column, the other side's column)``."""
    rel = relations.of(column)
    database, related = await meta.table_by_pk(ctx, table_pk=rel.related_pk)
    if related is None:
        raise naming.error("table", "not_found")
    for c in related["columns"]:
        if c["kind"] == "relationship" and c["key"] == rel.two_way_key and int(c["spec"]["relatedTablePk"]) == table["id"]:
            return related, column, c
    if await ctx.db.fetchval("SELECT id FROM databases_column WHERE id = %s", (column["id"],)) is None:
        raise naming.error("column", "not_found")  # both sides deleted by a concurrent request
    raise AppwriteError("general_server_error", "A relationship is missing its other side.")


async def relationship_update(ctx, *, naming: Naming, table: dict, column: dict, on_delete: str | None,
                              new_key: str | None) -> dict:
    """Change ``onDelete`` (both sides) and/or rename this side's key (the other side's
    ``twoWayKey`` follows; stored links move to the new key). Raises 400, 409."""
    if on_delete is not None and on_delete not in ON_DELETE:
        raise invalid_argument("onDelete", f"Value must be one of ({', '.join(ON_DELETE)})")
    related, this, other = await _sides(ctx, naming, table, column)
    key = column["key"]
    new_key = check_key(new_key, "newKey") if new_key else key
    if new_key != key and any(c["key"].lower() == new_key.lower() for c in table["columns"]):
        raise naming.error("column", "already_exists")
    this_spec, other_spec = dict(this["spec"]), dict(other["spec"])
    if on_delete is not None:
        this_spec["onDelete"] = other_spec["onDelete"] = on_delete
    other_spec["twoWayKey"] = new_key
    ts = ctx.db.dt(now())
    with races(missing=lambda: naming.error("column", "not_found"),
               exists=lambda: naming.error("column", "already_exists")):
        async with ctx.db.transaction() as tx:
            await meta.lock_tables(tx, naming, [table, related])
            row = present(await tx.fetchone(
                "UPDATE databases_column SET key = %s, spec = %s, updated_at = %s WHERE id = %s RETURNING *",
                (new_key, tx.json(this_spec), ts, this["id"])))
            present(await tx.fetchval("UPDATE databases_column SET spec = %s, updated_at = %s WHERE id = %s "
                                      "RETURNING id", (tx.json(other_spec), ts, other["id"])))
            if new_key != key:
                await tx.execute(dialect.rename_key(tx, table["id"], key, new_key))
                await tx.execute(f"DROP INDEX IF EXISTS {index_name(table['id'], this['id'])}")
                statement = _index_sql(tx, table["id"], this["id"], relations.of(column_from_row(row)))
                if statement:
                    await tx.execute(statement)
    await meta.forget_table(ctx, table)
    await meta.forget_table(ctx, related)
    return column_from_row(row)


async def relationship_delete(ctx, *, naming: Naming, table: dict, column: dict) -> None:
    """Delete both sides of the relationship, their stored links and their indexes."""
    related, this, other = await _sides(ctx, naming, table, column)
    with races(missing=lambda: naming.error("column", "not_found")):
        async with ctx.db.transaction() as tx:
            fresh, _ = await meta.lock_tables(tx, naming, [table, related])
            present([c for c in fresh["columns"] if c["id"] == this["id"]])  # a concurrent delete came first
            await drop_sides(tx, [(table, this), (related, other)])
    await meta.forget_table(ctx, table)
    await meta.forget_table(ctx, related)


async def drop_sides(tx, sides: list[tuple[dict, dict]]) -> None:
    """Delete relationship column records with their links and indexes (inside ``tx``)."""
    for owner, c in sides:
        await tx.execute(f"DROP INDEX IF EXISTS {index_name(owner['id'], c['id'])}")
        await tx.execute("DELETE FROM databases_column WHERE id = %s", (c["id"],))
        await tx.execute(dialect.remove_key(tx, owner["id"], c["key"]))


async def other_sides(ctx, table: dict) -> list[tuple[dict, dict]]:
    """``(related table, column)`` of the other sides of ``table``'s relationships that live in
    other tables (to drop with the table)."""
    out = []
    for c in table["columns"]:
        if c["kind"] != "relationship":
            continue
        rel = relations.of(c)
        if rel.related_pk == table["id"]:
            continue
        _, related = await meta.table_by_pk(ctx, table_pk=rel.related_pk)
        if related is None:
            continue
        out += [(related, o) for o in related["columns"] if o["kind"] == "relationship"
                and o["key"] == rel.two_way_key and int(o["spec"]["relatedTablePk"]) == table["id"]]
    return out
