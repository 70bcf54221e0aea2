"""Writing rows of tables that take part in relationships, and deleting them (``onDelete``).

A relationship value is a related row's ID, a nested row object (``$id`` optional: a new ID is
made), or, on a side that holds many, a list of those (Appwrite ``Database::
createDocumentRelationships``). A nested object whose ID does not exist yet is created in the
related table (the caller needs ``create`` there; without ``$permissions`` it inherits the
parent row's); an existing one is updated with the object's values (``update`` permission). Linking
an existing row by ID needs the caller to be able to read it, and ``update`` on it when the link
is stored in that row. A value the side cannot hold (a list for a single link, a number, an ID
that is not a readable row, nesting deeper than 3) is 400 ``relationship_value_invalid``.

Deleting applies each relationship's ``onDelete`` (Appwrite ``deleteRestrict``/
``deleteSetNull``/``deleteCascade``): **restrict** refuses (403 ``row_delete_restricted``) when
the row is the parent of linked rows (one-to-one, one-to-many, many-to-many) or the "one" of a
many-to-one; **setNull** clears the links that point at the row; **cascade** also deletes the
linked rows on the cascading sides (one-to-one, the children of one-to-many, the rows of the
"many" of a many-to-one, many-to-many children), which needs ``delete`` permission on them.
Links that would dangle are always cleared. Everything runs in the caller's SQL transaction, so a
refused or failing step leaves nothing changed.
"""

from __future__ import annotations

import dataclasses

from apps.core.domain import permissions as perm
from apps.core.domain.events import WriteEvent, announce_all, record
from apps.core.domain.ids import is_valid_id, resolve_id
from apps.core.errors import AppwriteError
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.relations import MAX_DEPTH, Rel
from apps.databases.rowstore import (
    allowed,
    data_of,
    insert_row,
    item_permissions,
    perm_list,
    require_create,
    row_event,
    stored_data,
    structure_error,
    write_row,
)
from apps.databases.schema import validate_data
from apps.databases.selectors import meta
from apps.databases.selectors.rows import can_read, row_for_write


def invalid(message: str) -> AppwriteError:
    return AppwriteError("relationship_value_invalid", f"Invalid relationship value. {message}")


@dataclasses.dataclass(slots=True)
class Link:
    """One item of a relationship value: an existing row's ID, or a nested row (``payload``)."""

    uid: str
    payload: dict | None = None


class Writer:
    """The relationship work of one write, in SQL transaction ``tx``; ``ctx`` is the caller
    (its ``auth`` decides permissions). ``events`` collects the row writes: :meth:`record`
    them before the commit, :meth:`announce` them after."""

    def __init__(self, ctx, tx, naming: Naming):
        self.ctx = ctx
        self.tx = tx
        self.naming = naming
        self.events: list[tuple[dict, dict, dict, str]] = []
        self._recorded: list[WriteEvent] = []
        self._tables: dict[int, tuple[dict, dict]] = {}
        self._view = dataclasses.replace(ctx, db=tx)

    # --- metadata -----------------------------------------------------------------------------
    async def table(self, table_pk: int) -> tuple[dict, dict]:
        if table_pk not in self._tables:
            database, table = await meta.table_by_pk(self._view, table_pk=table_pk)
            if table is None:
                raise self.naming.error("table", "not_found")
            self._tables[table_pk] = (database, table)
        return self._tables[table_pk]

    @staticmethod
    def other_side(rel: Rel, related: dict, table_pk: int) -> Rel:
        for other in relations.rels(related):
            if other.key == rel.two_way_key and other.related_pk == table_pk:
                return other
        raise AssertionError(f"relationship {rel.key} has no other side")  # schema keeps both

    # --- values -------------------------------------------------------------------------------
    def parse(self, table: dict, data: dict, depth: int) -> dict[Rel, list[Link] | None]:
        """The relationship values in ``data``: ``{side: [links]}`` (``None``: set to nothing)."""
        out: dict[Rel, list[Link] | None] = {}
        by_key = {r.key: r for r in relations.rels(table) if not r.hidden}
        for key, value in data.items():
            rel = by_key.get(key)
            if rel is None:
                continue
            if value is None:
                out[rel] = None
                continue
            if rel.many:
                if not isinstance(value, list):
                    raise invalid(f'"{key}" takes a list of rows or row IDs.')
                items = value
            else:
                if isinstance(value, list):
                    raise invalid(f'"{key}" takes one row or row ID, not a list.')
                items = [value]
            links: list[Link] = []
            for item in items:
                if isinstance(item, str):
                    if not is_valid_id(item):
                        raise invalid(f'"{item}" is not a valid row ID.')
                    links.append(Link(item))
                elif isinstance(item, dict):
                    if depth + 1 >= MAX_DEPTH:
                        raise invalid(f"Nested rows may be at most {MAX_DEPTH} levels deep.")
                    uid = item.get("$id")
                    uid = resolve_id(uid if isinstance(uid, str) and uid else "unique()", "$id")
                    links.append(Link(uid, item))
                else:
                    raise invalid(f'"{key}" takes rows or row IDs.')
            seen: dict[str, Link] = {}
            for link in links:
                seen.setdefault(link.uid, link)
            out[rel] = list(seen.values())
        return out

    @staticmethod
    def own_values(links: dict[Rel, list[Link] | None]) -> dict:
        """What the row itself stores for its links (IDs)."""
        out = {}
        for rel, items in links.items():
            if not rel.stored:
                continue
            if rel.many:
                out[rel.key] = [link.uid for link in items or []]
            else:
                out[rel.key] = items[0].uid if items else None
        return out

    async def linked(self, table: dict, row: dict, rel: Rel) -> list[str]:
        """IDs of the rows ``row`` is linked to through ``rel`` (stored or computed)."""
        if rel.stored:
            value = data_of(row).get(rel.key)
            if value is None:
                return []
            return list(value) if isinstance(value, list) else [value]
        _, related = await self.table(rel.related_pk)
        other = self.other_side(rel, related, table["id"])
        sql, params = _refers_to(self.tx, related["id"], other, [row["uid"]])
        found = await self.tx.fetchall(f"SELECT r.uid FROM {dialect.ROWS} r WHERE {sql} ORDER BY r.id", params)
        return [r["uid"] for r in found]

    # --- writes -------------------------------------------------------------------------------
    async def create(self, database: dict, table: dict, row_uid: str, data: dict, permissions: list[str] | None,
                     depth: int = 0, inherit: list[str] | None = None) -> dict:
        """Insert a row with its links and nested rows. Raises the create route's errors and
        400 ``relationship_value_invalid``."""
        n = self.naming
        require_create(self.ctx, table)
        if not isinstance(data, dict) or (not data and depth == 0):
            raise n.error("row", "missing_data")
        if permissions is None and isinstance(data.get("$permissions"), list):
            permissions = data["$permissions"]
        values = validate_data(table["columns"], data, partial=False, invalid=structure_error(n))
        if permissions is not None:
            permissions = item_permissions(self.ctx, permissions)
        elif inherit is not None:
            permissions = list(inherit)
        else:
            permissions = perm.default_item_permissions(self.ctx.auth)
        links = self.parse(table, data, depth)
        stored = stored_data(n, {**values, **self.own_values(links)})
        row = await insert_row(self.tx, n, table, row_uid, stored, permissions)
        self.events.append((database, table, row, "create"))
        await self._apply(table, row, links, depth, previous={})
        return row

    async def update(self, database: dict, table: dict, row: dict, data: dict, permissions: list[str] | None,
                     depth: int = 0, *, partial: bool = True, check: bool = True) -> dict:
        """Update ``row`` (locked in the transaction) with ``data``; links in ``data`` replace
        the row's links of those relationships."""
        n = self.naming
        if check and not allowed(self.ctx.auth, table, perm_list(row), "update"):
            raise AppwriteError("user_unauthorized")
        hidden = {r.key for r in relations.rels(table)}
        merged_input = data if partial else {**{k: v for k, v in data_of(row).items() if k not in hidden}, **data}
        changes = validate_data(table["columns"], merged_input, partial=partial, invalid=structure_error(n))
        links = self.parse(table, data, depth)
        previous = {rel: await self.linked(table, row, rel) for rel in links}
        new_permissions = perm_list(row) if permissions is None else item_permissions(self.ctx, permissions)
        merged = stored_data(n, {**data_of(row), **changes, **self.own_values(links)})
        row = await write_row(self.tx, n, row, merged, new_permissions)
        self.events.append((database, table, row, "update"))
        await self._apply(table, row, links, depth, previous=previous)
        return row

    async def upsert(self, database: dict, table: dict, row_uid: str, data: dict,
                     permissions: list[str] | None) -> tuple[dict, bool]:
        row = await row_for_write(self.tx, table=table, row_uid=row_uid)
        if row is None:
            return await self.create(database, table, row_uid, data, permissions), True
        return await self.update(database, table, row, data, permissions, partial=False), False

    async def _apply(self, table: dict, row: dict, links: dict, depth: int, previous: dict) -> None:
        for rel, items in links.items():
            rdb, related = await self.table(rel.related_pk)
            other = self.other_side(rel, related, table["id"])
            new = {link.uid for link in items or []}
            if other.stored:  # unlink the rows no longer named first (a one-to-one target may move)
                for uid in previous.get(rel, []):
                    if uid not in new:
                        old = await row_for_write(self.tx, table=related, row_uid=uid)
                        if old is not None:
                            await self._set_ref(related, old, other, row["uid"], add=False)
            for link in items or []:
                existing = await row_for_write(self.tx, table=related, row_uid=link.uid)
                if link.payload is not None:
                    values = {k: v for k, v in link.payload.items() if k not in ("$id", "$permissions")}
                    given = link.payload.get("$permissions")
                    if existing is None:
                        existing = await self.create(rdb, related, link.uid, values, given, depth + 1,
                                                     inherit=perm_list(row))
                    elif values or given is not None:
                        existing = await self.update(rdb, related, existing, values, given, depth + 1)
                elif existing is None or not can_read(self.ctx.auth, related, perm_list(existing)):
                    raise invalid(f'Related {self.naming.row} "{link.uid}" was not found.')
                if other.stored:
                    if link.payload is None and not allowed(self.ctx.auth, related, perm_list(existing), "update"):
                        raise AppwriteError("user_unauthorized")
                    await self._steal(related, existing, other, row["uid"], rel, table)
                    await self._set_ref(related, existing, other, row["uid"], add=True)

    async def _steal(self, related: dict, target: dict, other: Rel, uid: str, rel: Rel, table: dict) -> None:
        """One-to-one: ``target`` may be linked to another row of this table; that row lets go."""
        if rel.type != "oneToOne" or not rel.stored:
            return
        previous = data_of(target).get(other.key)
        if previous and previous != uid:
            holder = await row_for_write(self.tx, table=table, row_uid=previous)
            if holder is not None and data_of(holder).get(rel.key) == target["uid"]:
                await self._set_ref(table, holder, rel, target["uid"], add=False)

    async def _set_ref(self, table: dict, row: dict, side: Rel, uid: str, *, add: bool) -> dict:
        """Make ``row``'s stored link ``side`` include (``add``) or drop the row ``uid``."""
        data = data_of(row)
        if side.many:
            current = list(data.get(side.key) or [])
            if add and uid not in current:
                current.append(uid)
            elif not add and uid in current:
                current.remove(uid)
            value = current
        else:
            if not add and data.get(side.key) != uid:
                return row
            value = uid if add else None
        if data.get(side.key) == value:
            return row
        data[side.key] = value
        return await write_row(self.tx, self.naming, row, stored_data(self.naming, data), perm_list(row))

    # --- deletes ------------------------------------------------------------------------------
    async def delete(self, database: dict, table: dict, row: dict, visited: set | None = None) -> None:
        """Delete ``row`` (locked) after applying ``onDelete`` of every relationship of its table."""
        visited = set() if visited is None else visited
        visited.add((table["id"], row["uid"]))
        for rel in relations.rels(table):
            linked = await self.linked(table, row, rel)
            if not linked:
                continue
            rdb, related = await self.table(rel.related_pk)
            other = self.other_side(rel, related, table["id"])
            parent_of_links = (rel.side == "parent" and rel.type != "manyToOne") or (
                rel.type == "manyToOne" and rel.side == "child")
            if rel.on_delete == "restrict" and parent_of_links:
                raise self.naming.error("row", "delete_restricted")
            cascades = rel.type == "oneToOne" or parent_of_links
            for uid in linked:
                if (related["id"], uid) in visited:
                    continue
                target = await row_for_write(self.tx, table=related, row_uid=uid)
                if target is None:
                    continue
                if rel.on_delete == "cascade" and cascades:
                    if not allowed(self.ctx.auth, related, perm_list(target), "delete"):
                        raise AppwriteError("user_unauthorized")
                    await self.delete(rdb, related, target, visited)
                elif other.stored:  # clear the link that would dangle
                    await self._set_ref(related, target, other, row["uid"], add=False)
        await self.tx.execute(f"DELETE FROM {dialect.ROWS} WHERE id = %s", (row["id"],))
        self.events.append((database, table, row, "delete"))

    async def record(self) -> None:
        """Last in the transaction: record the row writes' events with it (``events.record``)."""
        self._recorded = [row_event(self.ctx, d, t, r, a) for d, t, r, a in self.events]
        await record(self.ctx, self.tx, self._recorded)

    async def announce(self) -> None:
        """After the commit: announce the events :meth:`record` kept."""
        await announce_all(self.ctx, self._recorded)


def _refers_to(db, table_pk: int, side: Rel, uids: list[str]) -> tuple[str, list]:
    """``(where, params)`` over alias ``r``: rows of ``table_pk`` whose stored link ``side``
    names one of ``uids``."""
    base = f"r.table_id = {int(table_pk)}"
    if side.many:
        if dialect.is_pg(db):
            return f"{base} AND (r.data->'{side.key}') ?| %s::text[]", [list(uids)]
        marks = ", ".join(["%s"] * len(uids))
        return (f"{base} AND EXISTS (SELECT 1 FROM json_each(r.data, '$.\"{side.key}\"') j "
                f"WHERE j.value IN ({marks}))", list(uids))
    marks = ", ".join(["%s"] * len(uids))
    return f"{base} AND {dialect.data_text_expr(db, side.key)} IN ({marks})", list(uids)


refers_to = _refers_to
