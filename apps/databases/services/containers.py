"""Writes for databases and tables (collections). Each raises typed ``AppwriteError``s."""

from __future__ import annotations

from apps.core.domain import permissions as perm
from apps.core.drivers.db import UniqueViolation, now, present, races
from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.selectors import meta
from apps.databases.services import ddl


async def database_create(ctx, *, naming: Naming, database_uid: str, name: str, enabled: bool,
                          description: str) -> dict:
    """Create a database of type ``naming.db_type``. Raises 409 ``database_already_exists``."""
    ts = ctx.db.dt(now())
    try:
        await ctx.db.execute(
            "INSERT INTO databases_database (project_id, uid, name, description, enabled, type, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (ctx.project["id"], database_uid, name, description, enabled, naming.db_type, ts, ts),
        )
    except UniqueViolation:
        raise AppwriteError("database_already_exists") from None
    return await meta.database_get(ctx, database_uid=database_uid)


async def database_update(ctx, *, database: dict, fields: dict) -> dict:
    """Update ``name``/``enabled``/``description`` (only the keys given). Raises 404
    ``database_not_found`` when a concurrent request deleted it."""
    sets = [f"{k} = %s" for k in fields] + ["updated_at = %s"]
    with races(missing=lambda: AppwriteError("database_not_found")):
        present(await ctx.db.fetchval(f"UPDATE databases_database SET {', '.join(sets)} WHERE id = %s RETURNING id",
                                      (*fields.values(), ctx.db.dt(now()), database["id"])))
        await meta.forget_database(ctx, database)
        return present(await meta.database_get(ctx, database_uid=database["uid"]))


def _create_trash_database(project_id: int, close: bool) -> int:
    from django.utils import timezone

    from apps.databases.models import Database
    from apps.projects.trash import TRASH_UID, orm_get_or_create

    now_ = timezone.now()
    return orm_get_or_create(Database, close, project_id=project_id, uid=TRASH_UID,
                             defaults={"name": "Deleted tables", "enabled": False, "created_at": now_,
                                       "updated_at": now_})


async def _trash_database_id(ctx) -> int:
    """The database (of the trash project) that holds deleted tables; created if missing. Call
    it before the transaction that moves tables there."""
    from apps.projects.trash import TRASH_UID, trash_project_id

    project_id = await trash_project_id(ctx)
    found = await ctx.db.fetchval("SELECT id FROM databases_database WHERE project_id = %s AND uid = %s",
                                  (project_id, TRASH_UID))
    if found is None:
        found = await run_blocking(ctx.mode, _create_trash_database, project_id, ctx.mode == "async")
    return found


async def _trash_tables(tx, trash: int, table_ids: list[int]) -> None:
    """Move tables to the trash database ``trash`` (``~<id>``, no permissions) and queue the
    removal of their rows, in the caller's transaction (apps.projects.trash)."""
    if not table_ids:
        return
    from apps.core.tasks.queue import enqueue
    from apps.databases.tasks import purge_tables

    await ddl.drop_all(tx, table_ids)
    marks = ", ".join(["%s"] * len(table_ids))
    await tx.execute(
        f"UPDATE databases_table SET database_id = %s, uid = '~' || id, permissions = %s, row_security = %s, "
        f"enabled = %s WHERE id IN ({marks})", (trash, tx.json([]), False, False, *table_ids))
    await enqueue(tx, purge_tables, table_ids=list(table_ids))


async def database_delete(ctx, *, database: dict) -> None:
    """Delete a database: it is gone at once, its tables move to the trash and the worker deletes
    their rows (Appwrite deletes a database's collections in its deletes worker too)."""
    trash = await _trash_database_id(ctx)
    lock = " FOR UPDATE" if dialect.is_pg(ctx.db) else ""
    with races(missing=lambda: AppwriteError("database_not_found")):
        async with ctx.db.transaction() as tx:
            # The database row first: a concurrent delete waits here and then finds it gone; a
            # table created meanwhile (its insert holds a key-share lock) is committed first and seen.
            present(await tx.fetchval(f"SELECT id FROM databases_database WHERE id = %s{lock}", (database["id"],)))
            tables = await tx.fetchall(f"SELECT id FROM databases_table WHERE database_id = %s ORDER BY id{lock}",
                                       (database["id"],))
            await _trash_tables(tx, trash, [t["id"] for t in tables])
            await tx.execute("DELETE FROM databases_database WHERE id = %s", (database["id"],))
    await meta.forget_database(ctx, database)


async def table_create(ctx, *, naming: Naming, database: dict, table_uid: str, name: str,
                       permissions: list[str] | None, row_security: bool, enabled: bool, description: str) -> dict:
    """Create an empty table. Raises 409 ``table_already_exists`` / ``collection_already_exists``,
    400 ``general_argument_invalid`` for permission strings that don't parse."""
    permissions = perm.normalize(permissions, perm.CONTAINER_ACTIONS) or []
    ts = ctx.db.dt(now())
    with races(missing=lambda: AppwriteError("database_not_found"),
               exists=lambda: naming.error("table", "already_exists")):
        await ctx.db.execute(
            "INSERT INTO databases_table (database_id, uid, name, description, enabled, row_security, permissions, "
            "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (database["id"], table_uid, name, description, enabled, row_security, ctx.db.json(permissions), ts, ts),
        )
    _, table = await meta.table_meta(ctx, database_uid=database["uid"], table_uid=table_uid)
    if table is None:  # its database was deleted right after the insert
        raise naming.error("table", "not_found")
    return table


async def table_update(ctx, *, naming: Naming, database: dict, table: dict, fields: dict) -> dict:
    """Update ``name``, ``permissions``, ``row_security``, ``enabled``, ``description``. Raises
    404 ``table_not_found`` / ``collection_not_found`` when a concurrent request deleted it."""
    if "permissions" in fields:
        fields["permissions"] = ctx.db.json(perm.normalize(fields["permissions"], perm.CONTAINER_ACTIONS) or [])
    sets = [f"{k} = %s" for k in fields] + ["updated_at = %s"]
    with races(missing=lambda: naming.error("table", "not_found")):
        present(await ctx.db.fetchval(
            f"UPDATE databases_table SET {', '.join(sets)} WHERE id = %s AND database_id = %s RETURNING id",
            (*fields.values(), ctx.db.dt(now()), table["id"], database["id"])))
        await meta.forget_table(ctx, table)
        _, fresh = await meta.table_meta(ctx, database_uid=database["uid"], table_uid=table["uid"])
        return present(fresh)


async def table_delete(ctx, *, naming: Naming, table: dict) -> None:
    """Delete a table: it is gone at once (its ID free again, its SQL indexes dropped, the other
    sides of its relationships removed from related tables with their stored links); the worker
    deletes its rows in batches, then its columns and indexes."""
    from apps.databases.relations import schema as relationship_schema

    others = await relationship_schema.other_sides(ctx, table)
    trash = await _trash_database_id(ctx)
    async with ctx.db.transaction() as tx:
        await meta.lock_table(tx, naming, table)  # 404 when a concurrent delete came first
        await relationship_schema.drop_sides(tx, others)
        await _trash_tables(tx, trash, [table["id"]])
    await meta.forget_table(ctx, table)
    for related, _ in others:
        await meta.forget_table(ctx, related)
