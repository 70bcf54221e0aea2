"""Writes of teams and memberships. Each raises typed :class:`AppwriteError`\\ s; every change
that gives or takes a role drops the affected users' cached sessions in every process
(``apps.core.drivers.cache``), so the change holds from their next request on.

Who may do what (Appwrite's Teams module): keys may do everything; a session user creates teams
(and becomes their owner), reads the teams they belong to, and manages a team's name, prefs and
members only with the team's ``owner`` role; a member may leave (delete their own membership).
"""

from __future__ import annotations

import hashlib
import secrets

from apps.accounts.selectors import accounts as account_selectors
from apps.accounts.services import accounts
from apps.core.domain.ids import unique_id
from apps.core.drivers import cache
from apps.core.drivers.db import ForeignKeyViolation, UniqueViolation, now
from apps.core.errors import AppwriteError
from apps.core.http.auth import team_tag
from apps.teams import selectors


def _found(row: dict | None, error: str) -> dict:
    """``row``, read back after a write; gone meanwhile (a concurrent delete): AppwriteError(``error``)."""
    if row is None:
        raise AppwriteError(error)
    return row


def hash_secret(secret: str) -> str:
    """An invitation secret as stored: its SHA-256, hex (Appwrite stores token hashes)."""
    return hashlib.sha256(secret.encode()).hexdigest()


async def _immediate(tx) -> None:
    """Check foreign keys at each statement in this transaction (PostgreSQL defers Django's to
    the commit): a parent deleted by a concurrent request then fails the statement, which is
    answered 404, instead of the commit."""
    if tx.vendor == "postgresql":
        await tx.execute("SET CONSTRAINTS ALL IMMEDIATE")


async def _forget_users(ctx, *user_ids: int) -> None:
    if user_ids:
        await cache.invalidate(ctx, *(account_selectors.user_tag(uid) for uid in dict.fromkeys(user_ids)))


# --- teams --------------------------------------------------------------------------------------

async def team_create(ctx, *, team_uid: str, name: str, roles: list[str]) -> dict:
    """Create a team. A session user becomes its first member, confirmed, with ``roles`` plus
    ``owner``; a key creates it empty (Appwrite). Returns the team row (with ``total``).

    Raises 409 ``team_already_exists``.
    """
    user = ctx.auth.user
    ts = now()
    async with ctx.db.transaction() as tx:
        await _immediate(tx)
        try:
            row = await tx.fetchone(
                "INSERT INTO teams_team (project_id, uid, name, prefs, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (ctx.project["id"], team_uid, name, tx.json({}), tx.dt(ts), tx.dt(ts)),
            )
        except UniqueViolation:
            raise AppwriteError("team_already_exists") from None
        if user is not None:
            member_roles = list(dict.fromkeys([*roles, "owner"]))
            await _membership_insert(ctx, tx, team_id=row["id"], user_id=user["id"], roles=member_roles, confirm=True,
                                     secret_hash="", at=ts)
        team = _found(await selectors.team_get(ctx, team_uid=team_uid, db=tx), "team_not_found")
    if user is not None:
        await _forget_users(ctx, user["id"])
    return team


async def team_update(ctx, *, team: dict, name: str | None = None, prefs: dict | None = None) -> dict:
    """Rename a team or replace its prefs; owners and keys only.

    Raises 401 ``user_unauthorized``, 404 ``team_not_found`` (deleted meanwhile).
    """
    if not selectors.is_owner(ctx.auth, team["uid"]):
        raise AppwriteError("user_unauthorized")
    sets, values = ["updated_at = %s"], [ctx.db.dt(now())]
    if name is not None:
        sets.append("name = %s")
        values.append(name)
    if prefs is not None:
        sets.append("prefs = %s")
        values.append(ctx.db.json(prefs))
    changed = await ctx.db.execute(f"UPDATE teams_team SET {', '.join(sets)} WHERE id = %s", (*values, team["id"]))
    fresh = await selectors.team_get(ctx, team_uid=team["uid"]) if changed else None
    if fresh is None:
        raise AppwriteError("team_not_found")
    return fresh


async def team_delete(ctx, *, team: dict) -> None:
    """Delete a team and its memberships; owners and keys only. Its members lose the team's
    roles at once in every process.

    Raises 401 ``user_unauthorized``, 404 ``team_not_found`` (deleted meanwhile).
    """
    if not selectors.is_owner(ctx.auth, team["uid"]):
        raise AppwriteError("user_unauthorized")
    async with ctx.db.transaction() as tx:
        if tx.vendor == "postgresql":
            # Holds off new memberships of this team (their foreign key check waits on this lock
            # and then fails) while its members are read and removed.
            await tx.execute("SELECT id FROM teams_team WHERE id = %s FOR UPDATE", (team["id"],))
        members = await selectors.member_user_ids(tx, team_id=team["id"])
        await tx.execute("DELETE FROM teams_membership WHERE team_id = %s", (team["id"],))
        deleted = await tx.execute("DELETE FROM teams_team WHERE id = %s", (team["id"],))
    # The team tag reaches every cached session that carried one of its roles, including a member
    # who joined while the delete ran (its row was loaded with the team's memberships).
    await cache.invalidate(ctx, team_tag(ctx.project["id"], team["uid"]),
                           *(account_selectors.user_tag(uid) for uid in members))
    if not deleted:
        raise AppwriteError("team_not_found")


# --- memberships --------------------------------------------------------------------------------

async def _membership_insert(ctx, db, *, team_id: int, user_id: int, roles: list[str], confirm: bool,
                             secret_hash: str, at, uid: str = "") -> str:
    uid = uid or unique_id()
    try:
        await db.execute(
            "INSERT INTO teams_membership (project_id, team_id, user_id, uid, roles, confirm, secret_hash, invited, "
            "joined, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (ctx.project["id"], team_id, user_id, uid, db.json(roles), confirm, secret_hash, db.dt(at),
             db.dt(at) if confirm else None, db.dt(at), db.dt(at)),
        )
    except UniqueViolation:  # the same user joined or was invited by a concurrent request
        raise AppwriteError("membership_already_confirmed") from None
    except ForeignKeyViolation:  # the team or the user was deleted meanwhile
        raise AppwriteError("team_not_found") from None
    return uid


async def invitation_send(ctx, db, *, team: dict, membership: dict, invitee: dict, url: str, secret: str) -> None:
    """Queue the invitation mail to ``invitee``: a link to ``url`` carrying ``membershipId``,
    ``userId``, ``secret``, ``teamId`` and ``teamName`` (Appwrite's invitation mail), in the
    language of the request's ``X-Appwrite-Locale``.

    ``db`` is the transaction that stores the invitation, so a failure leaves nothing behind and
    the mail is queued only if the invitation commits. An invitee with only a phone number gets
    the link by SMS through the project's SMS provider (``apps.messaging.phone``); without one,
    503 ``general_phone_disabled``.
    """
    from apps.accounts.services.links import url_with
    from apps.accounts.services.mails import invitation_mail

    link = url_with(url, {"membershipId": membership["uid"], "userId": invitee["uid"], "secret": secret,
                          "teamId": team["uid"], "teamName": team["name"]})
    inviter = ctx.auth.user or {}
    if not invitee["email"]:
        from apps.messaging.phone import text_in_transaction

        who = inviter.get("name") or inviter.get("email") or "Someone"
        await text_in_transaction(ctx, db, phone=invitee["phone"],
                                  text=f"{who} invited you to join {team['name']} at {ctx.project['name']}: {link}")
        return
    await invitation_mail(ctx, db, recipient=invitee["email"], recipient_name=invitee["name"], team=team["name"],
                          inviter=inviter.get("name") or inviter.get("email", ""), url=link)


class _InTransaction:
    """``ctx`` whose ``db`` is the open transaction, for selectors called inside it (the
    embedded SQLite driver serialises on one connection: a read through ``ctx.db`` would wait
    for the transaction that waits for it)."""

    def __init__(self, ctx, db):
        self.db, self.project, self.auth, self.mode = db, ctx.project, ctx.auth, ctx.mode


async def _invitee(ctx, db, *, user_uid: str, email: str, phone: str, name: str) -> tuple[dict, bool]:
    """The user to invite and whether it was created now (Appwrite's order: userId, then email,
    then phone). Raises 404 ``user_not_found``, 409 ``user_already_exists`` (userId/email and
    phone disagree), 400 ``user_count_exceeded``."""
    from apps.accounts.selectors.users import user_by_phone

    ctx = _InTransaction(ctx, db)
    project_id = ctx.project["id"]
    user = None
    if user_uid:
        user = await account_selectors.user_get_by_uid(ctx, project_id=project_id, user_uid=user_uid)
        if user is None:
            raise AppwriteError("user_not_found", "User with given userId doesn't exist.")
        if email and user["email"] != email:
            raise AppwriteError("user_already_exists", "Given userId and email doesn't match")
        if phone and user["phone"] != phone:
            raise AppwriteError("user_already_exists", "Given userId and phone doesn't match")
        return user, False
    if email:
        user = await account_selectors.user_get_by_email(ctx, project_id=project_id, email=email)
        if user is not None and phone and user["phone"] != phone:
            raise AppwriteError("user_already_exists", "Given email and phone doesn't match")
    elif phone:
        user = await user_by_phone(ctx, phone=phone)
    if user is not None:
        return user, False
    limit = ctx.project.get("auth_limit") or 0
    if limit and not ctx.auth.is_key:
        count = await db.fetchval("SELECT COUNT(*) AS n FROM accounts_user WHERE project_id = %s", (project_id,))
        if count >= limit:
            raise AppwriteError("user_count_exceeded", "Project registration is restricted. Contact your "
                                                       "administrator for more information.")
    created = await accounts.user_create(ctx, user_uid=unique_id(), email=email, phone=phone, password="",
                                         name=name or email, db=db, enforce_limit=False)  # checked above
    return created, True


async def membership_create(ctx, *, team: dict, user_uid: str, email: str, phone: str, roles: list[str],
                            url: str, name: str, membership_uid: str = "") -> tuple[dict, bool]:
    """Add a member to ``team`` (owners and keys only). A key's membership is confirmed at once
    and sends nothing; a session user's is an invitation the invitee accepts with the mailed
    secret (:func:`invitation_send`). An invitee without an account gets one (no password).
    Returns ``(membership row, invitee was created)``.

    Raises 401 ``user_unauthorized``, 404 ``user_not_found``, 409 ``user_already_exists``,
    409 ``membership_already_confirmed``, 400 ``user_count_exceeded``,
    503 ``general_phone_disabled`` (an invitation to a phone number, and no SMS provider).
    """
    if not selectors.is_owner(ctx.auth, team["uid"]):
        raise AppwriteError("user_unauthorized", "User is not allowed to send invitations for this team")
    by_key = ctx.auth.is_key
    ts = now()
    secret = secrets.token_hex(128)
    async with ctx.db.transaction() as tx:
        await _immediate(tx)
        invitee, created = await _invitee(ctx, tx, user_uid=user_uid, email=email, phone=phone, name=name)
        existing = await selectors.membership_find(ctx, team_id=team["id"], user_id=invitee["id"], db=tx)
        if existing is not None and existing["confirm"]:
            raise AppwriteError("membership_already_confirmed")
        if existing is None:
            uid = await _membership_insert(ctx, tx, team_id=team["id"], user_id=invitee["id"], roles=roles,
                                           confirm=by_key, secret_hash="" if by_key else hash_secret(secret), at=ts,
                                           uid=membership_uid)
        else:
            uid = existing["uid"]
            if by_key:
                changed = await tx.execute(
                    "UPDATE teams_membership SET confirm = %s, joined = %s, invited = %s, secret_hash = '', "
                    "updated_at = %s WHERE id = %s AND NOT confirm",
                    (True, tx.dt(ts), tx.dt(ts), tx.dt(ts), existing["id"]))
            else:
                changed = await tx.execute(
                    "UPDATE teams_membership SET secret_hash = %s, invited = %s, updated_at = %s "
                    "WHERE id = %s AND NOT confirm", (hash_secret(secret), tx.dt(ts), tx.dt(ts), existing["id"]))
            if not changed:
                raise AppwriteError("membership_already_confirmed")
        membership = _found(await selectors.membership_get(ctx, membership_uid=uid, db=tx), "membership_not_found")
        if not by_key:
            await invitation_send(ctx, tx, team=team, membership=membership, invitee=invitee, url=url, secret=secret)
    if by_key:
        await _forget_users(ctx, invitee["id"])
    return membership, created


async def membership_update_roles(ctx, *, team: dict, membership: dict, roles: list[str]) -> dict:
    """Replace a membership's roles (owners and keys only).

    Raises 401 ``user_unauthorized``, 404 ``membership_not_found`` (deleted meanwhile).
    """
    if not selectors.is_owner(ctx.auth, team["uid"]):
        raise AppwriteError("user_unauthorized", "User is not allowed to modify roles")
    changed = await ctx.db.execute("UPDATE teams_membership SET roles = %s, updated_at = %s WHERE id = %s",
                                   (ctx.db.json(roles), ctx.db.dt(now()), membership["id"]))
    await _forget_users(ctx, membership["user_id"])
    fresh = await selectors.membership_get(ctx, membership_uid=membership["uid"]) if changed else None
    if fresh is None:
        raise AppwriteError("membership_not_found")
    return fresh


async def membership_delete(ctx, *, team: dict, membership: dict) -> None:
    """Remove a member or withdraw an invitation: the member themself, the team's owners and
    keys may (Appwrite's membership permissions).

    Raises 401 ``user_unauthorized``, 404 ``team_invite_not_found`` (deleted meanwhile).
    """
    own = ctx.auth.user is not None and ctx.auth.user["id"] == membership["user_id"]
    if not (own or selectors.is_owner(ctx.auth, team["uid"])):
        raise AppwriteError("user_unauthorized")
    deleted = await ctx.db.execute("DELETE FROM teams_membership WHERE id = %s", (membership["id"],))
    await _forget_users(ctx, membership["user_id"])
    if not deleted:
        raise AppwriteError("team_invite_not_found")


async def membership_accept(ctx, *, team_uid: str, membership_uid: str, user_uid: str,
                            secret: str) -> tuple[dict, dict]:
    """Accept an invitation with its secret (Appwrite's checks, in its order): confirms the
    membership, marks the invitee's email verified. Returns ``(membership, invitee user)``.

    Raises 404 ``membership_not_found``, 404 ``team_not_found``, 404 ``team_membership_mismatch``,
    401 ``team_invalid_secret``, 401 ``team_invite_mismatch``, 409 ``membership_already_confirmed``.
    """
    membership = await selectors.membership_get(ctx, membership_uid=membership_uid)
    if membership is None:
        raise AppwriteError("membership_not_found")
    team = await selectors.team_get(ctx, team_uid=team_uid)
    if team is None:
        raise AppwriteError("team_not_found")
    if membership["team_id"] != team["id"]:
        raise AppwriteError("team_membership_mismatch")
    if not membership["secret_hash"] or not secrets.compare_digest(hash_secret(secret), membership["secret_hash"]):
        raise AppwriteError("team_invalid_secret")
    caller = ctx.auth.user
    if user_uid != membership["user_uid"] or (caller is not None and caller["id"] != membership["user_id"]):
        raise AppwriteError("team_invite_mismatch", "Invite does not belong to current user")
    if membership["confirm"]:
        raise AppwriteError("membership_already_confirmed")
    ts = now()
    async with ctx.db.transaction() as tx:
        changed = await tx.execute(
            "UPDATE teams_membership SET confirm = %s, joined = %s, updated_at = %s "
            "WHERE id = %s AND NOT confirm", (True, tx.dt(ts), tx.dt(ts), membership["id"]))
        if not changed:  # a concurrent accept won, or the membership is gone
            raise AppwriteError("membership_already_confirmed")
        await tx.execute("UPDATE accounts_user SET email_verification = %s, updated_at = %s WHERE id = %s",
                         (True, tx.dt(ts), membership["user_id"]))
    await _forget_users(ctx, membership["user_id"])
    user = _found(await account_selectors.user_get(ctx, user_id=membership["user_id"]), "user_not_found")
    return _found(await selectors.membership_get(ctx, membership_uid=membership_uid), "membership_not_found"), user
