"""Loading related rows for ``select`` (Appwrite 1.8: related rows load only when selected).

``select(["*", "author.*"])`` loads every column of the related row(s), ``"author.name"`` only
``name`` (with the system keys), ``"author.publisher.*"`` goes one level further (at most 3
levels). A relationship that is not selected is left out of the row. Each level is one query per
relationship for the whole page of rows, and only related rows the caller may read are included
(a single link the caller may not read is ``null``).
"""

from __future__ import annotations

from apps.core.drivers.db import as_json
from apps.core.errors import AppwriteError
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.relations import MAX_DEPTH
from apps.databases.relations.writes import refers_to
from apps.databases.selectors import meta
from apps.databases.selectors.rows import ROW_COLUMNS, read_filter


def nested(select: list[str] | None) -> dict[str, list[str]]:
    """``{relationship key: selections inside it}`` from the dotted entries of ``select``."""
    out: dict[str, list[str]] = {}
    for entry in select or []:
        if "." in entry:
            head, rest = entry.split(".", 1)
            out.setdefault(head, []).append(rest)
    return out


async def load(ctx, naming: Naming, table: dict, rows: list[dict], select: list[str] | None,
               depth: int = 1) -> dict[str, dict]:
    """``{row uid: {key: rendered related row(s)}}`` for the relationships ``select`` names."""
    from apps.databases.responses import row_model

    wanted = nested(select)
    out: dict[str, dict] = {row["uid"]: {} for row in rows}
    if not wanted or not rows:
        return out
    by_key = {r.key: r for r in relations.rels(table) if not r.hidden}
    for key, inner in wanted.items():
        rel = by_key.get(key)
        if rel is None:
            continue
        rdb, related = await meta.table_by_pk(ctx, table_pk=rel.related_pk)
        found: list[dict] = []
        if related is not None:
            found = await _fetch(ctx, table, rows, rel, related)
        deeper = await load(ctx, naming, related, found, inner, depth + 1) if depth < MAX_DEPTH and found else {}
        rendered = {r["uid"]: row_model(naming, rdb, related, r, inner, deeper.get(r["uid"])) for r in found}
        other = _other(rel, related, table["id"]) if related is not None else None
        for row in rows:
            ids = _ids_for(row, rel, other, found)
            if rel.many:
                out[row["uid"]][key] = [rendered[i] for i in ids if i in rendered]
            else:
                out[row["uid"]][key] = rendered.get(ids[0]) if ids else None
    return out


def _other(rel, related: dict, table_pk: int):
    for other in relations.rels(related):
        if other.key == rel.two_way_key and other.related_pk == table_pk:
            return other
    return None


def _ids_for(row: dict, rel, other, found: list[dict]) -> list[str]:
    if rel.stored:
        value = (as_json(row["data"]) or {}).get(rel.key)
        return [] if value is None else (list(value) if isinstance(value, list) else [value])
    out = []
    for r in found:
        value = (as_json(r["data"]) or {}).get(other.key) if other is not None else None
        if value == row["uid"] or (isinstance(value, list) and row["uid"] in value):
            out.append(r["uid"])
    return out


async def _fetch(ctx, table: dict, rows: list[dict], rel, related: dict) -> list[dict]:
    """The related rows of ``rows`` the caller may read (one query)."""
    try:
        where, params = read_filter(ctx.db, ctx.auth, related)
    except AppwriteError:  # the related table grants no read and has no row security
        return []
    if rel.stored:
        ids = sorted({i for row in rows for i in _ids_for(row, rel, None, [])})
        if not ids:
            return []
        marks = ", ".join(["%s"] * len(ids))
        cond, cparams = f"r.table_id = {int(related['id'])} AND r.uid IN ({marks})", ids
    else:
        other = _other(rel, related, table["id"])
        if other is None:
            return []
        cond, cparams = refers_to(ctx.db, related["id"], other, [row["uid"] for row in rows])
    sql = f"SELECT {ROW_COLUMNS} FROM {dialect.ROWS} r WHERE {' AND '.join([cond, *where])} ORDER BY r.id"
    return await ctx.db.fetchall(sql, [*cparams, *params])


async def every_relationship(ctx, table: dict, prefix: str = "", depth: int = 1, visited: tuple = ()) -> list[str]:
    """``key.*`` selections of every relationship, nested up to 3 levels, never back into a
    table already on the path (what Appwrite's V20 request filter adds for pre-1.8 clients)."""
    out: list[str] = []
    visited = (*visited, table["id"])
    for rel in relations.rels(table):
        if rel.hidden or rel.related_pk in visited:
            continue
        full = f"{prefix}{rel.key}"
        out.append(f"{full}.*")
        if depth < MAX_DEPTH:
            _, related = await meta.table_by_pk(ctx, table_pk=rel.related_pk)
            if related is not None:
                out += await every_relationship(ctx, related, f"{full}.", depth + 1, visited)
    return out
