"""Reads of teams and memberships (raw SQL, ``apps.core.domain.listing`` for the lists)."""

from __future__ import annotations

from apps.core.domain import listing
from apps.core.domain.queries import Query
from apps.core.errors import AppwriteError

# A user's confirmed memberships as JSON text ``[[teamId, membershipId, [roles]], ...]`` over the
# user alias ``u``; installed into the session lookup by ``TeamsConfig.ready``
# (``apps.core.http.auth.set_memberships_sql``). An index lookup on (user_id, confirm).
MEMBERSHIPS_SQL = {
    "postgresql": (
        "(SELECT json_agg(json_build_array(mt.uid, mm.uid, mm.roles))::text FROM teams_membership mm "
        "JOIN teams_team mt ON mt.id = mm.team_id WHERE mm.user_id = u.id AND mm.confirm)"
    ),
    "sqlite": (
        "(SELECT json_group_array(json_array(mt.uid, mm.uid, json(mm.roles))) FROM teams_membership mm "
        "JOIN teams_team mt ON mt.id = mm.team_id WHERE mm.user_id = u.id AND mm.confirm)"
    ),
}

# A deleted user leaves the project at once (moved to the trash project; the worker deletes the
# rows later): memberships count and list only with their user still in the team's project.
_TOTAL = ("(SELECT COUNT(*) FROM teams_membership tm JOIN accounts_user tu ON tu.id = tm.user_id "
          "AND tu.project_id = tm.project_id WHERE tm.team_id = t.id AND tm.confirm)")
TEAM_COLUMNS = f"t.id, t.uid, t.name, t.prefs, t.created_at, t.updated_at, {_TOTAL} AS total"

TEAM_ATTRIBUTES = {
    "$id": listing.Column("t.uid", "string"),
    "$sequence": listing.Column("t.id", "integer"),
    "$createdAt": listing.Column("t.created_at", "datetime"),
    "$updatedAt": listing.Column("t.updated_at", "datetime"),
    "name": listing.Column("t.name", "string"),
    "total": listing.Column(_TOTAL, "integer"),
}

MEMBERSHIP_COLUMNS = (
    "m.id, m.uid, m.roles, m.confirm, m.secret_hash, m.invited, m.joined, m.created_at, m.updated_at, "
    "m.team_id, m.user_id, t.uid AS team_uid, t.name AS team_name, u.uid AS user_uid, u.name AS user_name, "
    "u.email AS user_email, u.phone AS user_phone, u.accessed_at AS user_accessed_at, u.mfa AS user_mfa"
)
MEMBERSHIP_SOURCE = ("teams_membership m JOIN teams_team t ON t.id = m.team_id "
                     "JOIN accounts_user u ON u.id = m.user_id AND u.project_id = m.project_id")

MEMBERSHIP_ATTRIBUTES = {
    "$id": listing.Column("m.uid", "string"),
    "$sequence": listing.Column("m.id", "integer"),
    "$createdAt": listing.Column("m.created_at", "datetime"),
    "$updatedAt": listing.Column("m.updated_at", "datetime"),
    "userId": listing.Column("u.uid", "string"),
    "teamId": listing.Column("t.uid", "string"),
    "invited": listing.Column("m.invited", "datetime"),
    "joined": listing.Column("m.joined", "datetime"),
    "confirm": listing.Column("m.confirm", "boolean"),
    "roles": listing.Column("m.roles", "array"),
}


def team_uids_of(auth) -> list[str]:
    """The teams the caller is a confirmed member of, from its roles (``team:<id>``)."""
    return [role[5:] for role in auth.roles if role.startswith("team:") and "/" not in role]


def can_read_team(auth, team_uid: str) -> bool:
    """Appwrite's team permission ``read(team:<id>)``: keys, and the team's members."""
    return auth.is_key or f"team:{team_uid}" in auth.roles


def is_owner(auth, team_uid: str) -> bool:
    """``update``/``delete(team:<id>/owner)``: keys, and the team's owners."""
    return auth.is_key or f"team:{team_uid}/owner" in auth.roles


async def team_get(ctx, *, team_uid: str, db=None) -> dict | None:
    """The project's team ``team_uid`` (with ``total``), or ``None``; no permission check."""
    return await (db or ctx.db).fetchone(
        f"SELECT {TEAM_COLUMNS} FROM teams_team t WHERE t.project_id = %s AND t.uid = %s",
        (ctx.project["id"], team_uid),
    )


async def team_readable(ctx, *, team_uid: str) -> dict:
    """The team if the caller may read it. Raises 404 ``team_not_found`` (also for teams the
    caller is not a member of, as Appwrite hides them)."""
    team = await team_get(ctx, team_uid=team_uid) if can_read_team(ctx.auth, team_uid) else None
    if team is None:
        raise AppwriteError("team_not_found")
    return team


async def team_list(ctx, *, queries: list[Query], search: str, total: bool) -> tuple[int, list[dict]]:
    """``(total, rows)``: every team for keys, the caller's teams for users."""
    plan = listing.plan(ctx.db, queries, TEAM_ATTRIBUTES, seq="t.id")
    where, params = ["t.project_id = %s"], [ctx.project["id"]]
    if not ctx.auth.is_key:
        mine = team_uids_of(ctx.auth)
        if not mine:
            return 0, []
        where.append(f"t.uid IN ({', '.join(['%s'] * len(mine))})")
        params.extend(mine)
    listing.add_search(ctx.db, plan, ["t.uid", "t.name"], search)
    return await listing.run(ctx, source="teams_team t", where=where, params=params, p=plan, select=TEAM_COLUMNS,
                             uid="t.uid", total=total)


async def membership_get(ctx, *, membership_uid: str, db=None) -> dict | None:
    """The project's membership ``membership_uid`` with its team's and user's fields, or ``None``."""
    return await (db or ctx.db).fetchone(
        f"SELECT {MEMBERSHIP_COLUMNS} FROM {MEMBERSHIP_SOURCE} WHERE m.project_id = %s AND m.uid = %s",
        (ctx.project["id"], membership_uid),
    )


async def membership_find(ctx, *, team_id: int, user_id: int, db=None) -> dict | None:
    """The membership of user ``user_id`` (pk) in team ``team_id`` (pk), or ``None``."""
    return await (db or ctx.db).fetchone(
        f"SELECT {MEMBERSHIP_COLUMNS} FROM {MEMBERSHIP_SOURCE} WHERE m.team_id = %s AND m.user_id = %s",
        (team_id, user_id),
    )


async def membership_list(ctx, *, scope: tuple[str, list], queries: list[Query], search: str,
                          total: bool) -> tuple[int, list[dict]]:
    """``(total, rows)`` of memberships under ``scope`` (``("m.team_id = %s", [pk])`` or the
    same on ``m.user_id``). ``search`` looks in the membership and user IDs (Appwrite's
    ``search`` attribute of memberships)."""
    plan = listing.plan(ctx.db, queries, MEMBERSHIP_ATTRIBUTES, seq="m.id")
    listing.add_search(ctx.db, plan, ["m.uid", "u.uid"], search)
    return await listing.run(ctx, source=MEMBERSHIP_SOURCE, where=[scope[0]], params=list(scope[1]), p=plan,
                             select=MEMBERSHIP_COLUMNS, uid="m.uid", total=total)


async def member_user_ids(db, *, team_id: int) -> list[int]:
    """The user pks with a membership (any state) of team ``team_id``."""
    return [r["user_id"] for r in await db.fetchall("SELECT user_id FROM teams_membership WHERE team_id = %s",
                                                    (team_id,))]
