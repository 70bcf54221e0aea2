"""Membership endpoints: list, create (invite), get, update roles, delete, accept; and the
Users service's ``GET /users/{userId}/memberships``."""

from __future__ import annotations

from apps.accounts.api.cookies import set_session_cookies
from apps.accounts.credentials.tokens import encode_session_token
from apps.accounts.selectors.users import user_require
from apps.accounts.services import accounts
from apps.accounts.services.links import redirect_check
from apps.core.domain.ids import resolve_id
from apps.core.domain.mail import require_mail
from apps.core.domain.queries import parse_queries
from apps.core.drivers.db import as_dt
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content
from apps.teams import selectors, services
from apps.teams.api.events import announce_membership
from apps.teams.responses import membership_model


def _shown(ctx, row: dict) -> dict:
    """A membership as a team member reads it: keys see every field, users what the project
    allows (``memberships_*`` settings)."""
    return membership_model(row, project=None if ctx.auth.is_key else ctx.project)


async def _membership_of(ctx, team: dict, membership_uid: str) -> dict:
    membership = await selectors.membership_get(ctx, membership_uid=membership_uid)
    if membership is None:
        raise AppwriteError("membership_not_found")
    if membership["team_id"] != team["id"]:
        raise AppwriteError("team_membership_mismatch")
    return membership


async def memberships_list(ctx):
    p = ctx.params
    team = await selectors.team_readable(ctx, team_uid=p.teamId)
    total, rows = await selectors.membership_list(ctx, scope=("m.team_id = %s", [team["id"]]),
                                                  queries=parse_queries(p.queries), search=p.search, total=p.total)
    return json_response({"total": total, "memberships": [_shown(ctx, r) for r in rows]})


async def membership_create(ctx):
    p = ctx.params
    if not (p.userId or p.email or p.phone):
        raise invalid_argument("userId", "At least one of userId, email, or phone is required")
    if not ctx.auth.is_key:
        if not ctx.project.get("auth_invites", True):
            raise AppwriteError("user_auth_method_unsupported")
        # The invitation link must lead to one of the project's web platforms (Appwrite's
        # Redirect validator: the mail must not become an open redirect); it needs mail.
        if not p.url:
            raise invalid_argument("url", "URL is required")
        await redirect_check(ctx, p.url)
        require_mail(ctx.project)
    team = await selectors.team_readable(ctx, team_uid=p.teamId)
    membership_uid = resolve_id(p.membershipId, "membershipId") if p.membershipId else ""
    row, _ = await services.membership_create(ctx, team=team, user_uid=p.userId, email=p.email, phone=p.phone,
                                              roles=p.roles, url=p.url, name=p.name, membership_uid=membership_uid)
    model = membership_model(row)
    await announce_membership(ctx, model, row["user_uid"], "create")
    return json_response(model, 201)


async def membership_get(ctx):
    team = await selectors.team_readable(ctx, team_uid=ctx.params.teamId)
    return json_response(_shown(ctx, await _membership_of(ctx, team, ctx.params.membershipId)))


async def membership_update(ctx):
    p = ctx.params
    team = await selectors.team_readable(ctx, team_uid=p.teamId)
    membership = await _membership_of(ctx, team, p.membershipId)
    row = await services.membership_update_roles(ctx, team=team, membership=membership, roles=p.roles)
    model = membership_model(row)
    await announce_membership(ctx, model, row["user_uid"], "update")
    return json_response(model)


async def membership_delete(ctx):
    p = ctx.params
    membership = await selectors.membership_get(ctx, membership_uid=p.membershipId)
    if membership is None:
        raise AppwriteError("team_invite_not_found")
    team = await selectors.team_readable(ctx, team_uid=p.teamId)
    if membership["team_id"] != team["id"]:
        raise AppwriteError("team_membership_mismatch")
    await services.membership_delete(ctx, team=team, membership=membership)
    await announce_membership(ctx, membership_model(membership), membership["user_uid"], "delete")
    return no_content()


async def membership_update_status(ctx):
    """Accept an invitation. Without a session the invitee is signed in (a new session, the
    session cookies and ``X-Fallback-Cookies``, as Appwrite does); the body is the Membership."""
    p = ctx.params
    row, user = await services.membership_accept(ctx, team_uid=p.teamId, membership_uid=p.membershipId,
                                                 user_uid=p.userId, secret=p.secret)
    model = membership_model(row)
    response = json_response(model)
    if ctx.auth.user is None:
        session, secret = await accounts.session_create(ctx, user=user, provider="email", factors=["email"])
        token = encode_session_token(user["uid"], secret)
        set_session_cookies(ctx, response, token, int(as_dt(session["expire"]).timestamp()))
    await announce_membership(ctx, model, row["user_uid"], "update", detail="status")
    return response


async def user_memberships_list(ctx):
    """``GET /users/{userId}/memberships`` (API keys): every team membership of a user."""
    p = ctx.params
    user = await user_require(ctx, user_uid=p.userId)
    total, rows = await selectors.membership_list(ctx, scope=("m.user_id = %s", [user["id"]]),
                                                  queries=parse_queries(p.queries), search=p.search, total=p.total)
    return json_response({"total": total, "memberships": [membership_model(r) for r in rows]})
