"""Reads for buckets and files (raw SQL over ``apps.core.drivers.db``).

Files are listed and downloaded only once ``status = 'ready'`` (assembled); a single file GET
also shows pending uploads so clients can resume them.
"""

from __future__ import annotations

from apps.core.domain import permissions as perms
from apps.core.drivers.db import as_json
from apps.core.errors import AppwriteError
from apps.storage.querysql import Plan, like_escape, plan

BUCKET_COLUMNS = {
    "$id": ("uid", "str"), "name": ("name", "str"), "enabled": ("enabled", "bool"),
    "fileSecurity": ("file_security", "bool"), "maximumFileSize": ("maximum_file_size", "int"),
    "compression": ("compression", "str"), "encryption": ("encryption", "bool"),
    "antivirus": ("antivirus", "bool"), "transformations": ("transformations", "bool"),
    "$createdAt": ("created_at", "dt"), "$updatedAt": ("updated_at", "dt"),
}
FILE_COLUMNS = {
    "$id": ("uid", "str"), "name": ("name", "str"), "folder": ("folder", "str"),
    "mimeType": ("mime_type", "str"), "signature": ("signature", "str"),
    "sizeOriginal": ("size_original", "int"), "sizeActual": ("size_actual", "int"),
    "chunksTotal": ("chunks_total", "int"), "chunksUploaded": ("chunks_uploaded", "int"),
    "$createdAt": ("created_at", "dt"), "$updatedAt": ("updated_at", "dt"),
}

_TOTAL = "(SELECT COALESCE(SUM(f.size_actual), 0) FROM storage_file f WHERE f.bucket_id = b.id AND f.status = 'ready')"


async def bucket_get(ctx, *, bucket_uid: str) -> dict:
    """The bucket row (with ``total_size`` in bytes) of the request's project.

    Raises 404 ``storage_bucket_not_found``.
    """
    row = await ctx.db.fetchone(
        f"SELECT b.*, {_TOTAL} AS total_size FROM storage_bucket b WHERE b.project_id = %s AND b.uid = %s",
        (ctx.project["id"], bucket_uid),
    )
    if row is None:
        raise AppwriteError("storage_bucket_not_found")
    return row


async def bucket_get_usable(ctx, *, bucket_uid: str) -> dict:
    """The bucket for file routes: a disabled bucket is 404 for everyone but API keys
    (Appwrite Files/*.php). Raises 404 ``storage_bucket_not_found``."""
    row = await ctx.db.fetchone(
        "SELECT * FROM storage_bucket WHERE project_id = %s AND uid = %s", (ctx.project["id"], bucket_uid)
    )
    if row is None or (not row["enabled"] and not ctx.auth.is_key):
        raise AppwriteError("storage_bucket_not_found")
    return row


async def bucket_list(ctx, *, queries, search: str) -> tuple[int, list[dict]]:
    """``(total, rows)`` of the project's buckets. Raises 400 ``general_query_invalid``."""
    p = plan(queries, _qualified(BUCKET_COLUMNS), ctx.db)
    where = ["b.project_id = %s", *p.where]
    params = [ctx.project["id"], *p.params]
    if search:
        where.append("LOWER(b.name) LIKE %s ESCAPE '\\'")
        params.append("%" + like_escape(search.lower()) + "%")
    return await _page(ctx, "storage_bucket b", f"b.*, {_TOTAL} AS total_size", where, params, p,
                       cursor_scope=("b.project_id = %s", [ctx.project["id"]]))


async def file_get(ctx, *, bucket: dict, file_uid: str) -> dict:
    """The file row (any status). Raises 404 ``storage_file_not_found``."""
    row = await ctx.db.fetchone(
        "SELECT * FROM storage_file WHERE bucket_id = %s AND uid = %s", (bucket["id"], file_uid)
    )
    if row is None:
        raise AppwriteError("storage_file_not_found")
    return row


async def file_list(ctx, *, bucket: dict, queries, search: str, roles: list[str] | None) -> tuple[int, list[dict]]:
    """``(total, rows)`` of the bucket's ready files; ``roles`` (when not ``None``) keeps only
    files whose ``read`` permission names one of them. Raises 400 ``general_query_invalid``."""
    p = plan(queries, _qualified(FILE_COLUMNS), ctx.db)
    where = ["b.bucket_id = %s", "b.status = 'ready'", *p.where]
    params = [bucket["id"], *p.params]
    if search:
        where.append("LOWER(b.name) LIKE %s ESCAPE '\\'")
        params.append("%" + like_escape(search.lower()) + "%")
    if roles is not None:
        if not roles:
            return 0, []
        where.append("(" + " OR ".join(["b.read_roles LIKE %s ESCAPE '\\'"] * len(roles)) + ")")
        params.extend("%|" + like_escape(r) + "|%" for r in roles)
    return await _page(ctx, "storage_file b", "b.*", where, params, p,
                       cursor_scope=("b.bucket_id = %s AND b.status = 'ready'", [bucket["id"]]))


def _qualified(columns: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    return {name: (f"b.{col}", kind) for name, (col, kind) in columns.items()}


async def _page(ctx, table: str, select: str, where: list[str], params: list, p: Plan,
                cursor_scope: tuple[str, list]) -> tuple[int, list[dict]]:
    total_sql = f"SELECT COUNT(*) AS n FROM {table} WHERE " + " AND ".join(where)
    total = int(await ctx.db.fetchval(total_sql, params) or 0)
    order = [*p.order, ("b.id", "ASC")]
    where, params = list(where), list(params)
    reverse = False
    if p.cursor is not None:
        direction, uid = p.cursor
        scope_sql, scope_params = cursor_scope
        cursor = await ctx.db.fetchone(
            f"SELECT * FROM {table} WHERE {scope_sql} AND b.uid = %s", (*scope_params, uid)
        )
        if cursor is None:
            raise AppwriteError("general_cursor_not_found", f'Cursor "{uid}" not found.')
        reverse = direction == "before"
        terms, values = [], []
        for i, (col, d) in enumerate(order):
            forward = (d == "ASC") != reverse
            eqs = [f"{c} = %s" for c, _ in order[:i]]
            eq_vals = [cursor[c[2:]] for c, _ in order[:i]]
            terms.append("(" + " AND ".join([*eqs, f"{col} {'>' if forward else '<'} %s"]) + ")")
            values.extend([*eq_vals, cursor[col[2:]]])
        where.append("(" + " OR ".join(terms) + ")")
        params.extend(values)
    if reverse:
        order = [(c, "DESC" if d == "ASC" else "ASC") for c, d in order]
    sql = (f"SELECT {select} FROM {table} WHERE " + " AND ".join(where)
           + " ORDER BY " + ", ".join(f"{c} {d}" for c, d in order) + " LIMIT %s OFFSET %s")
    rows = await ctx.db.fetchall(sql, [*params, p.limit, p.offset])
    if reverse:
        rows.reverse()
    return total, rows


def can_read_file(auth, bucket: dict, file_permissions: list[str]) -> bool:
    """True when ``auth`` may read a file: the bucket grants ``read``, or the bucket has
    ``fileSecurity`` and the file's own permissions grant it. The REST reads and
    the realtime delivery check share this rule."""
    if perms.allows(auth, as_json(bucket["permissions"]) or [], "read"):
        return True
    return bool(bucket["file_security"]) and perms.allows(auth, file_permissions, "read")


async def bucket_for_event(db, *, project_uid: str, bucket_uid: str) -> dict | None:
    """The bucket row named by a file event (``WriteEvent.ids["bucketId"]``), or ``None``; for
    the realtime app, which has no request context."""
    return await db.fetchone(
        "SELECT b.* FROM storage_bucket b JOIN projects_project p ON p.id = b.project_id "
        "WHERE p.uid = %s AND b.uid = %s",
        (project_uid, bucket_uid),
    )
