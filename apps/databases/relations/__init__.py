"""Relationship columns (Appwrite 1.8): one-to-one, one-to-many, many-to-one, many-to-many, one-
or two-way, with ``onDelete`` restrict, cascade or set-null.

A relationship is two column records, one per table: the **parent** side (the table it was
created on, key ``key``) and the **child** side (the related table, key ``twoWayKey``). A one-way
relationship's child side is hidden: not listed, not readable or writable through the API, but
it reserves its key and lets deletes find references. Where the links live, in the rows' JSON
``data`` (P = parent table, C = child table, k = key, tk = twoWayKey):

* oneToOne: ``P.data[k]`` = the child row's ID; two-way also ``C.data[tk]`` = the parent's ID.
* oneToMany: ``C.data[tk]`` = the parent's ID (the parent's list is computed).
* manyToOne: ``P.data[k]`` = the child's ID (the child's list is computed).
* manyToMany: ``P.data[k]`` = a list of child IDs (the child's list is computed).

Each stored link key has an SQL index (unique for one-to-one), see :mod:`.schema`. Reads load
related rows only when ``select`` names them (:mod:`.reads`); writes take IDs or nested rows
(:mod:`.writes`).
"""

from __future__ import annotations

from dataclasses import dataclass

TYPES = ("oneToOne", "oneToMany", "manyToOne", "manyToMany")
ON_DELETE = ("restrict", "cascade", "setNull")
MAX_DEPTH = 3  # Appwrite: Database::RELATION_MAX_DEPTH


@dataclass(frozen=True, slots=True)
class Rel:
    """One side of a relationship, as seen from its table."""

    column_pk: int
    key: str
    related_pk: int
    related_uid: str
    type: str
    two_way: bool
    two_way_key: str
    on_delete: str
    side: str  # "parent" or "child"
    hidden: bool

    @property
    def stored(self) -> bool:
        """This side keeps the links in its own rows' data (else they are computed)."""
        return self.stores(self.type, self.side, self.two_way)

    @property
    def other_stored(self) -> bool:
        """The other side keeps links that point at this table's rows."""
        return self.stores(self.type, "child" if self.side == "parent" else "parent", self.two_way)

    @property
    def many(self) -> bool:
        """The value on this side is a list of related rows."""
        return (self.type == "manyToMany" or (self.type == "oneToMany" and self.side == "parent")
                or (self.type == "manyToOne" and self.side == "child"))

    @property
    def queryable(self) -> bool:
        """Filters on the key compare the stored related ID (Appwrite refuses the others as
        "virtual relationship attributes")."""
        return self.stored and not self.many

    @staticmethod
    def stores(type: str, side: str, two_way: bool) -> bool:
        if type == "oneToOne":
            return side == "parent" or two_way
        if type == "oneToMany":
            return side == "child"
        return side == "parent"  # manyToOne: the "many" rows; manyToMany: the parent's list


def of(column: dict) -> Rel:
    """The :class:`Rel` of a relationship column record."""
    s = column["spec"]
    return Rel(column_pk=column["id"], key=column["key"], related_pk=int(s["relatedTablePk"]),
               related_uid=s["relatedTable"], type=s["relationType"], two_way=bool(s["twoWay"]),
               two_way_key=s["twoWayKey"], on_delete=s["onDelete"], side=s["side"], hidden=bool(s.get("hidden")))


def rels(table: dict) -> list[Rel]:
    """Every relationship side of ``table`` (hidden ones included)."""
    return [of(c) for c in table["columns"] if c["kind"] == "relationship"]


def has(table: dict) -> bool:
    """True when ``table`` takes part in a relationship (its writes and deletes go through here).
    Read from the flag ``selectors.meta`` sets when it loads a table (a cached table answers
    without walking its columns on every row request)."""
    flag = table.get("has_relations")
    return flag if flag is not None else any(c["kind"] == "relationship" for c in table["columns"])


def visible(column: dict) -> bool:
    """False for the hidden child side of a one-way relationship."""
    return not (column["kind"] == "relationship" and column["spec"].get("hidden"))
