"""Reads of the Users service: the project's user list (Appwrite's queries and ``search``)."""

from __future__ import annotations

from apps.accounts.selectors.accounts import _USER_COLUMNS
from apps.core.domain import listing
from apps.core.domain.queries import Query
from apps.core.errors import AppwriteError

# Appwrite Validator/Queries/Users.php: the attributes a user list may filter and order on.
USER_ATTRIBUTES = {
    "$id": listing.Column("u.uid", "string"),
    "$sequence": listing.Column("u.id", "integer"),
    "$createdAt": listing.Column("u.created_at", "datetime"),
    "$updatedAt": listing.Column("u.updated_at", "datetime"),
    "name": listing.Column("u.name", "string"),
    "email": listing.Column("u.email", "string"),
    "phone": listing.Column("u.phone", "string"),
    "status": listing.Column("u.status", "boolean"),
    "passwordUpdate": listing.Column("u.password_update", "datetime"),
    "registration": listing.Column("u.registration", "datetime"),
    "emailVerification": listing.Column("u.email_verification", "boolean"),
    "phoneVerification": listing.Column("u.phone_verification", "boolean"),
    "labels": listing.Column("u.labels", "array"),
    "impersonator": listing.Column("u.impersonator", "boolean"),
    "accessedAt": listing.Column("u.accessed_at", "datetime"),
}


async def user_list(ctx, *, queries: list[Query], search: str, total: bool) -> tuple[int, list[dict]]:
    """``(total, rows)`` of the project's users. ``search`` matches any of its words in the ID,
    email, phone or name (Appwrite's ``search`` attribute: "id email phone name").

    Raises 400 ``general_query_invalid``, ``general_cursor_not_found``,
    ``database_query_order_null``.
    """
    plan = listing.plan(ctx.db, queries, USER_ATTRIBUTES, seq="u.id")
    where, params = ["u.project_id = %s"], [ctx.project["id"]]
    listing.add_search(ctx.db, plan, ["u.uid", "u.email", "u.phone", "u.name"], search)
    return await listing.run(ctx, source="accounts_user u", where=where, params=params, p=plan,
                             select=_USER_COLUMNS, uid="u.uid", total=total)


async def user_require(ctx, *, user_uid: str) -> dict:
    """The project's user ``user_uid``. Raises 404 ``user_not_found``."""
    from apps.accounts.selectors.accounts import user_get_by_uid

    user = await user_get_by_uid(ctx, project_id=ctx.project["id"], user_uid=user_uid)
    if user is None:
        raise AppwriteError("user_not_found")
    return user


async def user_by_phone(ctx, *, phone: str) -> dict | None:
    """The project's user with this phone number, or ``None``."""
    return await ctx.db.fetchone(
        f"SELECT {_USER_COLUMNS} FROM accounts_user u WHERE u.project_id = %s AND u.phone = %s",
        (ctx.project["id"], phone),
    )


async def session_by_uid(ctx, *, session_uid: str) -> dict | None:
    """A session of the project by its ID (any user), or ``None``."""
    return await ctx.db.fetchone(
        "SELECT * FROM accounts_session WHERE project_id = %s AND uid = %s", (ctx.project["id"], session_uid)
    )
