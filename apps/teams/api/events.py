"""The events of team and membership writes (announced after they committed)."""

from __future__ import annotations

from apps.core.domain.events import WriteEvent, announce


async def announce_team(ctx, model: dict, action: str, *, detail: str | None = None) -> None:
    """``teams.<teamId>.<action>[.<detail>]``: realtime ``teams``/``teams.<id>`` for the team's
    members; the audit log of the acting user (keys act for nobody's log)."""
    ids = {"teamId": model["$id"]}
    if ctx.auth.user is not None:
        ids["userId"] = ctx.auth.user["uid"]
    extra = {"audit": f"team.{'update' if action == 'update' else action}"}
    if detail:
        extra["detail"] = detail
    await announce(ctx, WriteEvent(ctx.project_id, "team", action, ids, model, extra=extra))


async def announce_membership(ctx, model: dict, member_uid: str, action: str, *, detail: str | None = None) -> None:
    """``teams.<teamId>.memberships.<membershipId>.<action>[.<detail>]``: realtime
    ``memberships``/``memberships.<id>`` for the team's members; the member's audit log."""
    ids = {"teamId": model["teamId"], "membershipId": model["$id"], "userId": member_uid}
    extra = {"audit": f"membership.{action}"}
    if detail:
        extra["detail"] = detail
    await announce(ctx, WriteEvent(ctx.project_id, "membership", action, ids, model, extra=extra))
