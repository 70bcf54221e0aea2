"""Team endpoints: list, create, get, rename, delete, prefs."""

from __future__ import annotations

import orjson

from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import parse_queries
from apps.core.errors import invalid_argument
from apps.core.http.context import json_response, no_content
from apps.teams import selectors, services
from apps.teams.api.events import announce_team
from apps.teams.responses import team_model

MAX_PREFS_BYTES = 65535


async def teams_list(ctx):
    p = ctx.params
    total, rows = await selectors.team_list(ctx, queries=parse_queries(p.queries), search=p.search, total=p.total)
    return json_response({"total": total, "teams": [team_model(r) for r in rows]})


async def team_create(ctx):
    p = ctx.params
    row = await services.team_create(ctx, team_uid=resolve_id(p.teamId, "teamId"), name=p.name, roles=p.roles)
    model = team_model(row)
    await announce_team(ctx, model, "create")
    return json_response(model, 201)


async def team_get(ctx):
    return json_response(team_model(await selectors.team_readable(ctx, team_uid=ctx.params.teamId)))


async def team_update_name(ctx):
    team = await selectors.team_readable(ctx, team_uid=ctx.params.teamId)
    model = team_model(await services.team_update(ctx, team=team, name=ctx.params.name))
    await announce_team(ctx, model, "update")
    return json_response(model)


async def team_delete(ctx):
    team = await selectors.team_readable(ctx, team_uid=ctx.params.teamId)
    await services.team_delete(ctx, team=team)
    await announce_team(ctx, team_model(team), "delete")
    return no_content()


async def team_get_prefs(ctx):
    team = await selectors.team_readable(ctx, team_uid=ctx.params.teamId)
    return json_response(team_model(team)["prefs"])


async def team_update_prefs(ctx):
    prefs = ctx.params.prefs
    if len(orjson.dumps(prefs)) > MAX_PREFS_BYTES:
        raise invalid_argument("prefs", f"Value must be a valid object no larger than {MAX_PREFS_BYTES} bytes")
    team = await selectors.team_readable(ctx, team_uid=ctx.params.teamId)
    model = team_model(await services.team_update(ctx, team=team, prefs=prefs))
    await announce_team(ctx, model, "update", detail="prefs")
    return json_response(model["prefs"])
