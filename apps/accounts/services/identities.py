"""Identities: provider accounts linked to users (Appwrite's ``identities`` collection).

Reads and writes in raw SQL, the list queries of ``GET /account/identities`` and
``GET /users/identities`` (Appwrite's ``Identities`` query validator: ``userId``, ``provider``,
``providerUid``, ``providerEmail``, ``providerAccessTokenExpiry`` and ``$id``, ``$createdAt``,
``$updatedAt``), and the Appwrite ``Identity`` model. Provider tokens are stored encrypted
(apps.accounts.oauth2.crypto) and sent in clear to the identity's owner and to API keys, as
Appwrite does.
"""

from __future__ import annotations

import datetime as dt

from apps.accounts.oauth2 import crypto
from apps.accounts.responses import provider_token
from apps.core.domain.ids import unique_id
from apps.core.domain.queries import parse_queries
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import UniqueViolation, as_dt, now
from apps.core.errors import AppwriteError

MAX_LIMIT = 5000
DEFAULT_LIMIT = 25

_SELECT = "SELECT i.*, u.uid AS user_uid FROM accounts_identity i JOIN accounts_user u ON u.id = i.user_id"

# Query attribute -> (SQL column, kind).
_ATTRIBUTES = {
    "userId": ("u.uid", "str"),
    "provider": ("i.provider", "str"),
    "providerUid": ("i.provider_uid", "str"),
    "providerEmail": ("i.provider_email", "str"),
    "providerAccessTokenExpiry": ("i.provider_access_token_expiry", "dt"),
    "$id": ("i.uid", "str"),
    "$createdAt": ("i.created_at", "dt"),
    "$updatedAt": ("i.updated_at", "dt"),
}
_COMPARE = {"equal": "=", "notEqual": "<>", "lessThan": "<", "lessThanEqual": "<=", "greaterThan": ">",
            "greaterThanEqual": ">="}


def _invalid(message: str) -> AppwriteError:
    return AppwriteError("general_query_invalid", f"Invalid query: {message}")


def _value(ctx, kind: str, attribute: str, value):
    if kind == "str":
        if not isinstance(value, str):
            raise _invalid(f"{attribute} takes string values")
        return value
    try:
        parsed = dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise _invalid(f"{attribute} takes ISO 8601 datetimes") from None
    return ctx.db.dt(parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC))


async def identity_list(ctx, *, project_id: int, queries, search: str = "", user_id: int | None = None,
                        total: bool = True) -> tuple[list[dict], int]:
    """Identities of the project (of one user when ``user_id``), filtered and paged by Appwrite
    ``queries``; returns ``(rows, total)`` (``total`` 0 when not asked for).

    Raises 400 ``general_query_invalid`` for an unknown attribute or method, ``select``, a bad
    value, a limit above 5000; 400 ``general_cursor_not_found`` for an unknown cursor.
    """
    where, params = ["i.project_id = %s"], [project_id]
    if user_id is not None:
        where.append("i.user_id = %s")
        params.append(user_id)
    if search:
        term = "%" + search.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(LOWER(i.provider) LIKE %s ESCAPE '\\' OR LOWER(i.provider_uid) LIKE %s ESCAPE '\\' "
                     "OR LOWER(i.provider_email) LIKE %s ESCAPE '\\' OR LOWER(u.uid) LIKE %s ESCAPE '\\')")
        params += [term] * 4
    order: list[tuple[str, str]] = []
    limit, offset, cursor = DEFAULT_LIMIT, 0, None
    for q in parse_queries(queries):
        if q.method in ("limit", "offset"):
            if q.method == "limit":
                limit = q.values[0]
                if limit > MAX_LIMIT:
                    raise _invalid(f"limit may be at most {MAX_LIMIT}")
            else:
                offset = q.values[0]
            continue
        if q.method in ("cursorAfter", "cursorBefore"):
            cursor = (q.method, q.values[0])
            continue
        if q.method not in _COMPARE and q.method not in ("orderAsc", "orderDesc", "isNull", "isNotNull"):
            raise _invalid(f"{q.method} is not supported on identities")
        if q.attribute not in _ATTRIBUTES:
            raise _invalid(f"attribute not found in schema: {q.attribute}")
        column, kind = _ATTRIBUTES[q.attribute]
        if q.method in ("orderAsc", "orderDesc"):
            order.append((column, "ASC" if q.method == "orderAsc" else "DESC"))
        elif q.method in ("isNull", "isNotNull"):
            where.append(f"{column} IS {'NOT ' if q.method == 'isNotNull' else ''}NULL")
        elif q.method in ("equal", "notEqual"):
            values = [_value(ctx, kind, q.attribute, v) for v in q.values]
            marks = ", ".join(["%s"] * len(values))
            where.append(f"{column} {'NOT ' if q.method == 'notEqual' else ''}IN ({marks})")
            params += values
        else:
            where.append(f"{column} {_COMPARE[q.method]} %s")
            params.append(_value(ctx, kind, q.attribute, q.values[0]))
    count = 0
    if total:
        count = await ctx.db.fetchval(
            f"SELECT COUNT(*) FROM accounts_identity i JOIN accounts_user u ON u.id = i.user_id "
            f"WHERE {' AND '.join(where)}", params)
    order.append(("i.id", order[-1][1] if order else "ASC"))
    page_where, page_params = list(where), list(params)
    if cursor is not None:
        anchor = await ctx.db.fetchone(
            f"{_SELECT} WHERE i.project_id = %s AND i.uid = %s", (project_id, cursor[1]))
        if anchor is None:
            raise AppwriteError("general_cursor_not_found")
        page_where.append(_after(order, anchor, before=cursor[0] == "cursorBefore", params=page_params))
    reverse = cursor is not None and cursor[0] == "cursorBefore"
    terms = ", ".join(f"{c} {_flip(d) if reverse else d}" for c, d in order)
    rows = await ctx.db.fetchall(
        f"{_SELECT} WHERE {' AND '.join(page_where)} ORDER BY {terms} LIMIT %s OFFSET %s",
        (*page_params, limit, offset))
    if reverse:
        rows.reverse()
    return rows, int(count or 0)


def _flip(direction: str) -> str:
    return "DESC" if direction == "ASC" else "ASC"


def _after(order: list[tuple[str, str]], anchor: dict, *, before: bool, params: list) -> str:
    """The keyset condition for rows after (or before) ``anchor`` in ``order``."""
    clauses = []
    for i, (column, direction) in enumerate(order):
        ascending = (direction == "ASC") != before
        parts = []
        for prev, _ in order[:i]:
            parts.append(f"{prev} = %s")
            params.append(anchor[prev.split(".", 1)[1] if prev != "u.uid" else "user_uid"])
        parts.append(f"{column} {'>' if ascending else '<'} %s")
        params.append(anchor[column.split(".", 1)[1] if column != "u.uid" else "user_uid"])
        clauses.append("(" + " AND ".join(parts) + ")")
    return "(" + " OR ".join(clauses) + ")"


async def identity_delete(ctx, *, project_id: int, identity_uid: str, user_id: int | None = None) -> dict:
    """Delete an identity (only the user's own when ``user_id``); returns the deleted row.

    Raises 404 ``user_identity_not_found``.
    """
    sql = "DELETE FROM accounts_identity WHERE project_id = %s AND uid = %s"
    params: list = [project_id, identity_uid]
    if user_id is not None:
        sql += " AND user_id = %s"
        params.append(user_id)
    row = await ctx.db.fetchone(sql + " RETURNING *", params)
    if row is None:
        raise AppwriteError("user_identity_not_found")
    return row


async def identity_find(ctx, *, project_id: int, provider: str, provider_uid: str) -> dict | None:
    """The identity of (``provider``, ``provider_uid``) in the project, or ``None``."""
    return await ctx.db.fetchone(
        "SELECT * FROM accounts_identity WHERE project_id = %s AND provider = %s AND provider_uid = %s",
        (project_id, provider, provider_uid))


async def identity_email_owner(ctx, *, project_id: int, email: str, not_user_id: int | None = None) -> int | None:
    """The user id of an identity whose provider email is ``email`` (another user's when
    ``not_user_id``), or ``None``."""
    sql = "SELECT user_id FROM accounts_identity WHERE project_id = %s AND provider_email = %s"
    params: list = [project_id, email]
    if not_user_id is not None:
        sql += " AND user_id <> %s"
        params.append(not_user_id)
    row = await ctx.db.fetchone(sql + " LIMIT 1", params)
    return row["user_id"] if row else None


async def identity_save(ctx, *, user_id: int, provider: str, provider_uid: str, provider_email: str,
                        access_token: str, refresh_token: str, expires_in: int | None) -> dict:
    """Create the user's identity for (``provider``, ``provider_uid``), or refresh its tokens
    and expiry; returns the row. Tokens are stored encrypted; ``expires_in`` is seconds from now.
    Raises 409 ``user_already_exists`` when a concurrent sign-in linked that account first.
    """
    stamp = now()
    expiry = ctx.db.dt(stamp + dt.timedelta(seconds=expires_in)) if expires_in is not None else None
    access, refresh = crypto.encrypt(access_token), crypto.encrypt(refresh_token)
    row = await ctx.db.fetchone(
        "UPDATE accounts_identity SET provider_access_token = %s, provider_refresh_token = %s, "
        "provider_access_token_expiry = %s, provider_email = %s, updated_at = %s "
        "WHERE project_id = %s AND user_id = %s AND provider = %s AND provider_uid = %s RETURNING *",
        (access, refresh, expiry, provider_email, ctx.db.dt(stamp), ctx.project["id"], user_id, provider,
         provider_uid))
    if row is not None:
        return row
    try:
        return await _insert(ctx, user_id, provider, provider_uid, provider_email, access, refresh, expiry, stamp)
    except UniqueViolation:  # the same provider account, linked a moment ago by a concurrent sign-in
        raise AppwriteError("user_already_exists") from None


async def _insert(ctx, user_id, provider, provider_uid, provider_email, access, refresh, expiry, stamp) -> dict:
    return await ctx.db.fetchone(
        "INSERT INTO accounts_identity (project_id, user_id, uid, provider, provider_uid, provider_email, "
        "provider_access_token, provider_refresh_token, provider_access_token_expiry, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
        (ctx.project["id"], user_id, unique_id(), provider, provider_uid, provider_email, access, refresh,
         expiry, ctx.db.dt(stamp), ctx.db.dt(stamp)))


def identity_model(row: dict, *, user_uid: str | None = None, provider_tokens: bool = True) -> dict:
    """The Appwrite ``Identity`` JSON for an identity row (``user_uid`` or the row's
    ``user_uid`` from a join). ``provider_tokens=False`` (someone else's identities: an
    impersonator) blanks the OAuth2 provider's tokens."""
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "userId": user_uid or row["user_uid"],
        "provider": row["provider"],
        "providerUid": row["provider_uid"],
        "providerEmail": row["provider_email"],
        "providerAccessToken": provider_token(row["provider_access_token"], provider_tokens),
        "providerAccessTokenExpiry": iso(as_dt(row["provider_access_token_expiry"])),
        "providerRefreshToken": provider_token(row["provider_refresh_token"], provider_tokens),
    }
