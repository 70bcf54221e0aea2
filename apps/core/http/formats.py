"""Response formats: answering each SDK in the model shapes of the Appwrite version it was built for.

Appwrite SDKs send ``X-Appwrite-Response-Format: <version>`` (the Python SDK 27 sends 2.5.0,
the 1.8-line Python SDKs 1.8.0). The newest shapes are the default; for an older format the
response JSON goes through every filter registered for its model with a version boundary above
the client's format, newest boundary first, as Appwrite's response filters stack
(``app/controllers/general.php``: V27 for < 2.0.0, ..., V21 for < 1.9.0, V20 for < 1.8.0...).
A format newer than this server gets the current shapes and, unlike Appwrite, no
``X-Appwrite-Warning``: the SDKs print that warning ("downgrade your SDK") on every call, and the
SDK 27 line they would be told to downgrade from is the one this server is built for. Without
the header, ``RESPONSE_FORMAT`` (setting) applies; empty means the current format.

Cost: one header lookup per request (versions are parsed once per distinct string); only
responses to clients older than a registered boundary of their model are decoded and encoded
again.

**Registering a filter** (any app, e.g. in its ``AppConfig.ready``). The model name is the
``response=`` of the endpoint's declaration; a filter takes the model's JSON (a dict) and
returns it in the older shape::

    from apps.core.http import formats

    # Membership had no userPhone before 1.9.2 (Appwrite V23); memberships lists too.
    formats.register("membership", "1.9.2", formats.drop("userPhone"), lists={"membershipList": "memberships"})

``lists`` names list models whose items are this model (``{"total", "<key>": [...]}``), so one
line covers ``GET`` of one item and of a list. :func:`drop` and :func:`rename` build the usual
filters; any ``fn(dict) -> dict`` works. :func:`older_than` tells a handler whether the client
asked for a format below a version (request-side compatibility, e.g. Appwrite's V20 request
filter).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson
from django.conf import settings

from apps.core.http.context import RequestContext

log = logging.getLogger("apps.core.http.formats")

Version = tuple[int, int, int]
ModelFilter = Callable[[dict[str, Any]], dict[str, Any]]

# model -> [(boundary, filter)], newest boundary first
_filters: dict[str, list[tuple[Version, ModelFilter]]] = {}


@lru_cache(maxsize=256)
def parse_version(text: str) -> Version | None:
    """``"1.8.0"`` -> ``(1, 8, 0)``; missing parts are 0; ``None`` for anything else."""
    parts = text.strip().split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        return None
    return tuple(int(p) for p in (*parts, "0", "0")[:3])  # type: ignore[return-value]


def current() -> Version:
    """This server's Appwrite version (``APPWRITE_VERSION``)."""
    return parse_version(settings.APPWRITE_VERSION)  # type: ignore[return-value]


def requested(ctx: RequestContext) -> Version | None:
    """The format the client asked for (header, else ``RESPONSE_FORMAT``); ``None``: current."""
    text = ctx.headers.get("x-appwrite-response-format") or getattr(settings, "RESPONSE_FORMAT", "")
    return parse_version(text) if text else None


def older_than(ctx: RequestContext, version: str) -> bool:
    """True when the client asked for a format below ``version``."""
    asked = requested(ctx)
    boundary = parse_version(version)
    return asked is not None and boundary is not None and asked < boundary


def register(models: str | tuple[str, ...], below: str, fn: ModelFilter, *, lists: dict[str, str] | None = None) -> None:
    """Apply ``fn`` to the JSON of ``models`` for clients whose format is below ``below``; also to
    each item of the list models in ``lists`` (list model -> key of its items)."""
    boundary = parse_version(below)
    if boundary is None:
        raise ValueError(f"not a version: {below!r}")
    names = (models,) if isinstance(models, str) else models
    for name in names:
        _add(name, boundary, fn)
    for list_model, key in (lists or {}).items():
        _add(list_model, boundary, _each(key, fn))


def _add(model: str, boundary: Version, fn: ModelFilter) -> None:
    entries = _filters.setdefault(model, [])
    entries.append((boundary, fn))
    entries.sort(key=lambda e: e[0], reverse=True)


def _each(key: str, fn: ModelFilter) -> ModelFilter:
    def apply(data: dict[str, Any]) -> dict[str, Any]:
        items = data.get(key)
        if isinstance(items, list):
            data[key] = [fn(item) if isinstance(item, dict) else item for item in items]
        return data

    return apply


def drop(*keys: str) -> ModelFilter:
    """A filter that removes ``keys`` (fields a model did not have yet)."""
    def apply(data: dict[str, Any]) -> dict[str, Any]:
        for key in keys:
            data.pop(key, None)
        return data

    return apply


def rename(**new_to_old: str) -> ModelFilter:
    """A filter that renames fields back: ``rename(newName="oldName")``."""
    def apply(data: dict[str, Any]) -> dict[str, Any]:
        for new, old in new_to_old.items():
            if new in data:
                data[old] = data.pop(new)
        return data

    return apply


def transform(model: str, data: dict[str, Any], asked: Version) -> dict[str, Any]:
    """``data`` (one ``model`` JSON) after every filter with a boundary above ``asked``."""
    for boundary, fn in _filters.get(model, ()):
        if asked < boundary:
            data = fn(data)
    return data


def _model_of(declared: str, data: dict[str, Any]) -> str:
    """The model of ``data`` for a route that declares ``"item|itemList"`` (one resource or a
    list of them, e.g. a create that takes one row or many): the list model when ``data`` has
    ``total``, as every Appwrite list model does."""
    if "|" not in declared:
        return declared
    options = declared.split("|")
    lists = [m for m in options if m.endswith("List")]
    items = [m for m in options if not m.endswith("List")]
    pick = lists if "total" in data else items
    return pick[0] if pick else options[0]


def finish(ctx: RequestContext, response: Any) -> None:
    """Adapt a /v1 ``response`` to the client's format in place (pipeline, after the handler)."""
    asked = requested(ctx)
    if asked is None or asked > current():
        return
    endpoint = ctx.endpoint
    declared = getattr(endpoint, "response", "") if endpoint is not None else ""
    models = [m for m in declared.split("|") if m in _filters] if declared else []
    if not models or response.status >= 300 or response.stream is not None or not response.body:
        return
    if not any(asked < boundary for m in models for boundary, _ in _filters[m]):
        return
    try:
        data = orjson.loads(response.body)
        if isinstance(data, dict):
            model = _model_of(declared, data)
            if model in _filters:
                response.body = orjson.dumps(transform(model, data, asked))
    except Exception:  # a filter bug must not turn a served answer into an error
        log.exception("response filter for %s (format %s) failed", model, asked)
