"""Deployment endpoints (API keys; scopes ``functions.read``/``functions.write``)."""

from __future__ import annotations

import os

from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import Response, UploadedPart, json_response, no_content
from apps.functions import code, deployments, selectors
from apps.functions.responses import deployment_model
from apps.functions.runtimes import RUNTIMES


async def deployment_create(ctx):
    """Multipart ``code`` (a ``.tar.gz``), single or chunked. ``entrypoint`` defaults to the
    function's, then the runtime's (``main.py`` / ``index.js``)."""
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    if not isinstance(p.code, UploadedPart):
        raise invalid_argument("code", "Value must be a file upload (multipart/form-data)")
    entrypoint = p.entrypoint or function["entrypoint"] or RUNTIMES.get(function["runtime"], {}).get("entrypoint", "")
    if not entrypoint:
        raise AppwriteError("function_entrypoint_missing")
    row = await deployments.deployment_create(ctx, function, part=p.code, entrypoint=entrypoint,
                                              commands=p.commands or function["commands"], activate=p.activate)
    return json_response(deployment_model(row, function["uid"]), 202)


async def deployment_list(ctx):
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    total, rows = await selectors.deployment_list(ctx, function, queries=p.queries, search=p.search)
    return json_response({"total": total if p.total else 0,
                          "deployments": [deployment_model(r, function["uid"]) for r in rows]})


async def deployment_get(ctx):
    function = await selectors.function_get(ctx, ctx.params.functionId)
    row = await selectors.deployment_get(ctx, function, ctx.params.deploymentId)
    return json_response(deployment_model(row, function["uid"]))


async def deployment_activate(ctx):
    """``PATCH /functions/{functionId}/deployment``: the function with its new active deployment."""
    from apps.functions.api.functions import _model

    function = await selectors.function_get(ctx, ctx.params.functionId)
    await deployments.deployment_activate(ctx, function, ctx.params.deploymentId)
    return json_response(await _model(ctx, await selectors.function_get(ctx, function["uid"])))


async def deployment_cancel(ctx):
    function = await selectors.function_get(ctx, ctx.params.functionId)
    row = await deployments.deployment_cancel(ctx, function, ctx.params.deploymentId)
    return json_response(deployment_model(row, function["uid"]))


async def deployment_delete(ctx):
    function = await selectors.function_get(ctx, ctx.params.functionId)
    await deployments.deployment_delete(ctx, function, ctx.params.deploymentId)
    return no_content()


async def deployment_duplicate(ctx):
    function = await selectors.function_get(ctx, ctx.params.functionId)
    row = await deployments.deployment_duplicate(ctx, function, ctx.params.deploymentId)
    return json_response(deployment_model(row, function["uid"]), 202)


async def deployment_template(ctx):
    """``POST /functions/{functionId}/deployments/template``: 202 with the deployment (status
    ``waiting``); the worker downloads the repository's archive from ``FUNCTIONS_TEMPLATE_SOURCE``,
    keeps ``rootDirectory`` and builds it. Raises 404 ``function_not_found``, 400
    ``function_entrypoint_missing``."""
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    entrypoint = function["entrypoint"] or RUNTIMES.get(function["runtime"], {}).get("entrypoint", "")
    if not entrypoint:
        raise AppwriteError("function_entrypoint_missing")
    template = {"owner": p.owner, "repository": p.repository, "rootDirectory": p.rootDirectory, "type": p.type,
                "reference": p.reference}
    row = await deployments.deployment_template(ctx, function, template=template, entrypoint=entrypoint,
                                                commands=function["commands"], activate=p.activate)
    return json_response(deployment_model(row, function["uid"]), 202)


async def deployment_unsupported(ctx):
    """VCS deployments need a GitHub App installation, which this server has not: 400
    ``general_argument_invalid`` saying to upload the code (or use a template) instead."""
    await selectors.function_get(ctx, ctx.params.functionId)
    raise AppwriteError("general_argument_invalid", "VCS deployments are not supported on this server (no GitHub "
                        "App): upload the code with createDeployment, or use createTemplateDeployment.")


async def deployment_download(ctx):
    """The source archive (``type=source``) or the build output (``type=output``, a tar)."""
    p = ctx.params
    function = await selectors.function_get(ctx, p.functionId)
    row = await selectors.deployment_get(ctx, function, p.deploymentId)
    if p.type == "output":
        if row["status"] != "ready":
            raise AppwriteError("build_not_ready")
        path, kind, name = code.build_path(row["id"]), "application/x-tar", f"{row['uid']}-output.tar"
    else:
        path, kind, name = code.source_path(row["id"]), "application/gzip", f"{row['uid']}.tar.gz"
    if not os.path.exists(path):
        raise AppwriteError("deployment_not_found", "The deployment's code is not available.")
    body = await run_blocking(ctx.mode, _read, path)
    return Response(status=200, body=body, content_type=kind,
                    headers=[("Content-Disposition", f'attachment; filename="{name}"')])


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()
