"""Operation parameters and request bodies of the OpenAPI document, from the input models.

The pydantic schema of an endpoint's input model gives names, types, limits and which are
required; this module adds what the model checks in code: Appwrite IDs (parameters named
``<x>Id``: at most 36 of ``a-z A-Z 0-9 . - _``, not starting with ``. - _``, as
``apps.core.domain.ids`` checks; a new resource's ID may also be ``unique()``) and queries (each a JSON
string). Lists in a query string or a multipart form are named ``name[]``, the form the server
reads as a list (``apps.core.http.params``).
"""

from __future__ import annotations

import re
from typing import Any

from apps.core.domain.ids import ID_PATTERN
from apps.core.domain.queries import MAX_QUERIES, MAX_QUERY_LENGTH
from apps.core.http.endpoint import Endpoint

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_QUERY_ITEM = {"type": "string", "contentMediaType": "application/json", "maxLength": MAX_QUERY_LENGTH,
               "description": "One query as JSON: {\"method\", \"attribute\"?, \"values\"?}"}


def path_names(path: str) -> list[str]:
    """The ``{name}`` parameters of a route path, in order."""
    return _PARAM.findall(path)


def _clean(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pydantic property schema without its generated titles (recursively)."""
    if isinstance(schema, dict):
        return {k: _clean(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` minus its ``null`` alternative (a query string or a path cannot carry null)."""
    options = [s for s in schema.get("anyOf", ()) if s.get("type") != "null"]
    if not options:
        return schema
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    if schema.get("default") is not None:
        rest["default"] = schema["default"]
    arrays = [s for s in options if s.get("type") == "array"]
    return {**rest, **(arrays[0] if arrays else options[0])}


def _is_id(name: str, schema: dict[str, Any]) -> bool:
    return name.endswith("Id") and schema.get("type") == "string" and "enum" not in schema


def _refine(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Add the ID pattern and the queries' item shape to one property schema."""
    if name == "queries":
        nullable = any(s.get("type") == "null" for s in schema.get("anyOf", ()))
        items = {"type": "array", "items": _QUERY_ITEM, "maxItems": MAX_QUERIES}
        return {"anyOf": [items, {"type": "null"}], "default": None} if nullable else items
    target = schema
    for option in schema.get("anyOf", ()):
        if option.get("type") == "string":
            target = option
    if _is_id(name, target) and "pattern" not in target:  # new IDs (apps.core.domain.ids.NewId) bring theirs
        target["pattern"] = ID_PATTERN
        target["maxLength"] = min(target.get("maxLength", 36), 36)
        target.setdefault("minLength", 1)
    return schema


def request(ep: Endpoint, path_params: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """``(parameters, requestBody)`` of ``ep``: path parameters, then query parameters (GET and
    HEAD) or a JSON / multipart body (other methods). The body is ``None`` without fields."""
    schema = ep.input.model_json_schema() if ep.input is not None else {"properties": {}, "required": []}
    props = {k: _clean(v) for k, v in schema.get("properties", {}).items()}
    required = set(schema.get("required", []))
    params = []
    for name in path_params:
        prop = _refine(name, _without_null(props.get(name, {"type": "string"})))
        prop.setdefault("minLength", 1)
        prop.setdefault("pattern", "^[^/]+$")  # one path segment
        params.append({"name": name, "in": "path", "required": True, "schema": prop})
    fields = {k: v for k, v in props.items() if k not in path_params}
    if not fields:
        return params, None
    if ep.method in ("GET", "HEAD"):
        for name, prop in fields.items():
            prop = _refine(name, _without_null(prop))
            listed = prop.get("type") == "array"
            param = {"name": f"{name}[]" if listed else name, "in": "query", "required": name in required,
                     "schema": prop}
            if listed:
                param.update(style="form", explode=True)
            params.append(param)
        return params, None
    body_props = {k: _refine(k, v) for k, v in fields.items()}
    body: dict[str, Any] = {"type": "object", "properties": body_props, "required": [k for k in fields if k in required]}
    if schema.get("additionalProperties") is False:
        body["additionalProperties"] = False
    if "anyOf" in schema:  # alternative forms, each with its own required fields
        body = {"oneOf": [_form(body, form["required"], schema["anyOf"]) for form in schema["anyOf"]]}
    if getattr(ep, "multipart", False):
        return params, {"required": True, "content": {"multipart/form-data": _multipart(body)}}
    return params, {"required": bool(body.get("required", True)), "content": {"application/json": {"schema": body}}}


def _form(body: dict[str, Any], required: list[str], forms: list[dict[str, Any]]) -> dict[str, Any]:
    """One form of a body with alternatives: its required fields, plus the optional fields that
    no other form requires."""
    others = {name for form in forms for name in form["required"]} - set(required)
    props = {k: _without_null(v) if k in required else v for k, v in body["properties"].items() if k not in others}
    return {**body, "properties": props, "required": required}


def _multipart(body: dict[str, Any]) -> dict[str, Any]:
    """A multipart form: the ``file`` part is bytes, lists are repeated ``name[]`` fields."""
    props, encoding = {}, {}
    for name, prop in body["properties"].items():
        if name == "file":
            props[name] = {"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"}
            encoding[name] = {"contentType": "application/octet-stream"}
            continue
        prop = _without_null(prop)
        if prop.get("type") == "array":
            name = f"{name}[]"
        props[name] = prop
    schema = {**body, "properties": props,
              "required": [n if n in props else f"{n}[]" for n in body["required"]]}
    return {"schema": schema, "encoding": encoding}
