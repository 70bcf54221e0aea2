"""The OpenAPI 3.1 document, generated from the endpoint declarations (``GET /v1/openapi.json``).

What it promises (README "OpenAPI document"): per operation, the credentials it accepts as
alternatives (:func:`security`), its parameters with the server's limits (:mod:`.params`), a
JSON or multipart body, the success response's model (:mod:`.models`) and the error statuses
it can answer with the Appwrite error model.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings

from apps.core.http.auth import GUEST_SCOPES, KEY_BASE_SCOPES, KEY_SCOPES, USER_SCOPES
from apps.core.http.endpoint import Endpoint
from apps.core.openapi import models
from apps.core.openapi.params import path_names, request

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/error"}}}
_BYTES = {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"}
_REASONS = {
    400: "Invalid parameters, body or project id", 401: "Missing scope or invalid credentials",
    408: "The client sent too slowly, or a database statement ran past its time limit",
    414: "The request line (path and query) is too long",
    431: "Too many or too large request headers",
    403: "Refused: unknown web origin, blocked user, or key and session together",
    404: "Project or resource not found", 409: "Conflict with an existing resource",
    410: "The transaction has expired", 412: "The sign-in provider is disabled",
    413: "The request body is too large", 416: "The requested range is not satisfiable",
    424: "The OAuth2 provider answered with an error", 429: "Rate limit exceeded (Retry-After)",
    500: "The probed service failed (health)", 501: "The authentication method is disabled", 503: "Overloaded or a backing service unavailable (Retry-After)",
}


def security(ep: Endpoint) -> list[dict[str, Any]]:
    """The credential sets ``ep`` accepts, as OpenAPI alternatives (any one set suffices).

    Derived from the route's scope and who holds it: guests (the project alone), API keys,
    and signed-in users by session or JWT (not on routes refusing an existing session). A key
    and a session together are refused (403), so no set combines them. ``[]`` for routes that
    need no project.
    """
    if ep.scope is None:
        return []
    project: dict[str, list[str]] = {"Project": []}
    out = []
    if ep.scope in GUEST_SCOPES:
        out.append(project)
    if ep.scope in KEY_SCOPES or ep.scope in KEY_BASE_SCOPES:
        out.append({**project, "Key": []})
    if ep.scope in USER_SCOPES and not ep.session_forbidden:
        out += [{**project, "Session": []}, {**project, "JWT": []}]
    return out


def _error_statuses(ep: Endpoint) -> list[int]:
    tag = ep.name.split(".", 1)[0]
    # 400: bad input, or a request the HTTP server cannot parse; 408, 414, 431: the request-head
    # limits and timeouts every route shares (README "Request limits and timeouts").
    out = {400, 408, 414, 431, 503, *ep.errors}
    if ep.scope is not None:
        out |= {401, 403, 404}  # credentials, origin, project
    if "{" in ep.path:
        out.add(404)
    if ep.method in ("POST", "PUT", "PATCH", "DELETE"):
        out |= {409, 413}
    if ep.abuse:
        out.add(429)
    if tag in ("account", "users", "teams"):
        out.add(501)
    if "oauth2" in ep.path.lower():
        out |= {412, 424}
    if tag in ("databases", "tablesDB") and ep.method != "GET":
        out.add(410)
    if ep.response == "any" and tag == "storage":
        out.add(416)
    return sorted(out)


def _success(ep: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    if ep.status == 204:
        return {"description": "No content"}
    if ep.status in (301, 302, 303, 307):
        return {"description": "Redirect", "headers": {"Location": {"schema": {"type": "string"}}}}
    if ep.response == "any" and ep.name.startswith("avatars."):
        return {"description": "PNG image", "content": {"image/png": {"schema": _BYTES}}}
    if ep.response == "any":
        return {"description": "The file's bytes, of its own media type", "content": {"*/*": {"schema": _BYTES}}}
    names = ep.response.split("|")  # "row|rowList": one of these models
    if ep.response and all(name in schemas for name in names):
        refs = [{"$ref": f"#/components/schemas/{name}"} for name in names]
        schema = refs[0] if len(refs) == 1 else {"anyOf": refs}
        return {"description": " or ".join(names), "content": {"application/json": {"schema": schema}}}
    if ep.name == "ping.get":
        return {"description": "Pong!", "content": {"text/plain": {"schema": {"type": "string"}}}}
    if ep.name == "openapi.get":
        return {"description": "This document", "content": {"application/json": {"schema": {"type": "object"}}}}
    if ep.response:
        raise ValueError(f"{ep.name}: no schema for response model {ep.response!r}")
    return {"description": "OK"}  # undeclared (the benchmark-only routes); the tests require a model


def operation(ep: Endpoint, path: str, schemas: dict[str, Any], operation_id: str) -> dict[str, Any]:
    """The OpenAPI operation object of ``ep`` served at ``path`` (``/v1``-relative)."""
    parameters, body = request(ep, path_names(path))
    responses = {str(ep.status): _success(ep, schemas)}
    for status in _error_statuses(ep):
        responses[str(status)] = {"description": _REASONS[status], "content": _ERROR}
    # The HTTP server itself refuses a request it cannot parse (e.g. a request line over 64 KiB)
    # before the API sees it, with a plain-text 400.
    responses["400"] = {**responses["400"], "content": {**_ERROR, "text/plain": {"schema": {"type": "string"}}}}
    op: dict[str, Any] = {
        "operationId": operation_id,
        "summary": ep.summary or ep.name,
        "tags": [ep.name.split(".", 1)[0]],
        "security": security(ep),
        "parameters": parameters,
        "responses": responses,
    }
    if body is not None:
        op["requestBody"] = body
    if ep.scope is not None:
        op["x-appwrite"] = {"scope": ep.scope, "abuse": ep.abuse or ""}
    return op


@cache
def document() -> dict[str, Any]:
    """The whole document; built once per process from the /v1 route table (``V1_ROUTER``).

    An alias path (a second URL of one endpoint) gets its own operation with the id
    ``<name>.alias<n>`` (operation ids are unique in a document). Raises ``ValueError`` for an
    endpoint whose response model has no schema.
    """
    from apps.core.http.routes import v1_router

    schemas = models.schemas()
    paths: dict[str, dict[str, Any]] = {}
    for ep in v1_router().endpoints:
        for n, path in enumerate((ep.path, *ep.aliases)):
            op_id = ep.name if n == 0 else f"{ep.name}.alias{n}"
            paths.setdefault("/v1" + path, {})[ep.method.lower()] = operation(ep, path, schemas, op_id)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Appwrite-compatible API", "version": settings.APPWRITE_VERSION},
        "paths": paths,
        "components": {
            "securitySchemes": {
                "Project": {"type": "apiKey", "in": "header", "name": "X-Appwrite-Project"},
                "Key": {"type": "apiKey", "in": "header", "name": "X-Appwrite-Key"},
                "Session": {"type": "apiKey", "in": "header", "name": "X-Appwrite-Session"},
                "JWT": {"type": "apiKey", "in": "header", "name": "X-Appwrite-JWT"},
            },
            "schemas": schemas,
        },
    }
