"""Function endpoints (API keys; scopes ``functions.read``/``functions.write``), the runtimes
and specifications lists, and function variables (the project's own are the Project service's)."""

from __future__ import annotations

from django.conf import settings

from apps.core.domain import permissions as perms
from apps.core.domain.ids import resolve_id
from apps.core.drivers.db import now
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.functions import selectors, services
from apps.functions.cron import next_after
from apps.functions.responses import function_model, variable_model
from apps.functions.runtimes import (
    DEFAULT_SPECIFICATION,
    RUNTIMES,
    SPECIFICATIONS,
    runtime_model,
    specification_model,
)


def _fields(p, runtime: str) -> dict:
    """Validated columns of a function. Raises 404 ``function_runtime_unsupported``, 400
    ``general_argument_invalid`` (timeout over ``FUNCTIONS_MAX_TIMEOUT``, unknown
    specification, bad execute roles)."""
    if runtime not in RUNTIMES:
        raise AppwriteError("function_runtime_unsupported",
                            f"The runtime {runtime!r} is not supported here. Supported: {', '.join(RUNTIMES)}.")
    if p.timeout > settings.FUNCTIONS_MAX_TIMEOUT:
        raise AppwriteError("general_argument_invalid", f"Invalid `timeout` param: Value must be a valid range "
                            f"between 1 and {settings.FUNCTIONS_MAX_TIMEOUT:,}")
    spec = p.specification or p.runtimeSpecification or p.buildSpecification or DEFAULT_SPECIFICATION
    if spec not in SPECIFICATIONS:
        raise AppwriteError("general_argument_invalid", f"Invalid `specification` param: one of "
                            f"{', '.join(SPECIFICATIONS)}")
    for role in p.execute:
        try:
            perms.parse(f'read("{role}")')
        except Exception:  # noqa: BLE001 - any parse failure is a bad role
            raise AppwriteError("general_argument_invalid", f"Invalid `execute` param: {role!r} is not a role.") from None
    return {
        "name": p.name, "description": p.description, "runtime": runtime, "execute": list(dict.fromkeys(p.execute)),
        "events": list(dict.fromkeys(p.events)), "has_events": bool(p.events), "schedule": p.schedule,
        "schedule_next": next_after(p.schedule, now()) if p.schedule else None, "timeout": p.timeout,
        "enabled": p.enabled, "logging": p.logging, "entrypoint": p.entrypoint, "commands": p.commands,
        "scopes": list(dict.fromkeys(p.scopes)), "specification": spec, "deployment_retention": p.deploymentRetention,
    }


async def _model(ctx, row: dict) -> dict:
    return function_model(row, await selectors.variables_of(ctx, row["id"]))


async def function_create(ctx):
    p = ctx.params
    row = await services.function_create(ctx, function_uid=resolve_id(p.functionId, "functionId"),
                                         fields=_fields(p, p.runtime))
    return json_response(await _model(ctx, row), 201)


async def function_list(ctx):
    p = ctx.params
    total, rows = await selectors.function_list(ctx, queries=p.queries, search=p.search)
    return json_response({"total": total if p.total else 0, "functions": [await _model(ctx, r) for r in rows]})


async def function_get(ctx):
    return json_response(await _model(ctx, await selectors.function_get(ctx, ctx.params.functionId)))


async def function_update(ctx):
    """PUT semantics: omitted settings go back to their defaults; ``runtime`` is kept."""
    p = ctx.params
    current = await selectors.function_get(ctx, p.functionId)
    row = await services.function_update(ctx, function_uid=p.functionId, fields=_fields(p, p.runtime or current["runtime"]))
    return json_response(await _model(ctx, row))


async def function_delete(ctx):
    await services.function_delete(ctx, function_uid=ctx.params.functionId)
    return no_content()


async def runtime_list(ctx):
    items = [runtime_model(k) for k in RUNTIMES]
    return json_response({"total": len(items) if ctx.params.total else 0, "runtimes": items})


async def specification_list(ctx):
    items = [specification_model(s) for s in SPECIFICATIONS]
    return json_response({"total": len(items) if ctx.params.total else 0, "specifications": items})


# --- variables: /functions/{functionId}/variables (the project's own are the Project service's) --
async def variable_create(ctx):
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    row = await services.variable_create(ctx, function=function, variable_uid=resolve_id(p.variableId, "variableId"),
                                         key=p.key, value=p.value, secret=p.secret, description=p.description)
    return json_response(variable_model(row), 201)


async def variable_list(ctx):
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    total, rows = await selectors.variable_list(ctx, function_id=function["id"], queries=p.queries)
    return json_response({"total": total if p.total else 0,
                          "variables": [variable_model({**r, "function_uid": function["uid"]}) for r in rows]})


async def variable_get(ctx):
    function = await selectors.function_get(ctx, ctx.params.functionId)
    row = await selectors.variable_get(ctx, function_id=function["id"], variable_uid=ctx.params.variableId)
    return json_response(variable_model(row))


async def variable_update(ctx):
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    row = await services.variable_update(ctx, function=function, variable_uid=p.variableId, key=p.key, value=p.value,
                                         secret=p.secret, description=p.description)
    return json_response(variable_model(row))


async def variable_delete(ctx):
    function = await selectors.function_get(ctx, ctx.params.functionId)
    await services.variable_delete(ctx, function=function, variable_uid=ctx.params.variableId)
    return no_content()
