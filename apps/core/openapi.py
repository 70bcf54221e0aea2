"""The OpenAPI 3.1 document, generated from the endpoint declarations (``GET /v1/openapi.json``)."""

from __future__ import annotations

import re
from functools import cache

from django.conf import settings

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@cache
def document() -> dict:
    """The whole document; built once per process from ``backend.urls.v1_router``."""
    from backend.urls import v1_router

    paths: dict[str, dict] = {}
    for ep in v1_router.endpoints:
        path_params = _PARAM.findall(ep.path)
        op: dict = {
            "operationId": ep.name,
            "summary": ep.summary or ep.name,
            "tags": [ep.name.split(".", 1)[0]],
            "responses": {
                str(ep.status): {"description": ep.response or ("No content" if ep.status == 204 else "OK")},
                "default": {"description": "Appwrite error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/error"}}}},
            },
            "parameters": [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in path_params],
        }
        if ep.scope is not None:
            op["x-appwrite"] = {"scope": ep.scope, "abuse": ep.abuse or ""}
            op["security"] = [{"Project": [], "Key": [], "Session": [], "JWT": []}]
        if ep.input is not None:
            schema = ep.input.model_json_schema()
            props = {k: v for k, v in schema.get("properties", {}).items() if k not in path_params}
            if props:
                body = {**schema, "properties": props}
                body["required"] = [r for r in schema.get("required", []) if r in props]
                if ep.method in ("GET", "HEAD"):
                    op["parameters"] += [
                        {"name": k, "in": "query", "required": k in body["required"], "schema": v}
                        for k, v in props.items()
                    ]
                else:
                    op["requestBody"] = {"content": {"application/json": {"schema": body}}}
        for path in (ep.path, *ep.aliases):
            paths.setdefault("/v1" + path, {})[ep.method.lower()] = op
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
            "schemas": {
                "error": {
                    "type": "object",
                    "required": ["message", "code", "type", "version"],
                    "properties": {
                        "message": {"type": "string"}, "code": {"type": "integer"},
                        "type": {"type": "string"}, "version": {"type": "string"},
                    },
                }
            },
        },
    }
