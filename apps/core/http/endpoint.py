"""Endpoint declarations and the /v1 router.

Every /v1 endpoint is declared once as an :class:`Endpoint` (method, path, input schema, required
scope, abuse rule, handler). Apps list theirs in ``apps/<app>/urls.py``; ``backend/urls.py``
composes them into one :class:`Router`, which both adapters and the OpenAPI document read.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from apps.core.errors import AppwriteError

Handler = Callable[[Any], Awaitable[Any]]

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One /v1 route.

    ``path`` is relative to ``/v1`` with ``{name}`` segments. ``scope`` is the Appwrite scope the
    caller must hold (``None`` = public, no project needed). ``input`` is a pydantic model of the
    parameters (path, query and body merged). ``abuse`` names a rule in the abuse app's table.
    ``session_forbidden`` makes the route refuse callers that already hold a session
    (401 ``user_session_already_exists``). ``status`` is the success status and
    ``response`` names the Appwrite response model, for the OpenAPI document
    (``"a|b"``: either model). ``multipart``
    marks an upload route: the document declares its body as ``multipart/form-data``.
    ``errors`` lists statuses beyond the common ones (400, 401, 403, 404, 503, ...) that the
    route answers by design, e.g. the 500 of a failed health probe, for the document too.
    """

    method: str
    path: str
    handler: Handler
    name: str
    scope: str | None = "global"
    input: type[BaseModel] | None = None
    abuse: str | None = None
    session_forbidden: bool = False
    status: int = 200
    response: str = ""
    summary: str = ""
    aliases: tuple[str, ...] = field(default=())
    multipart: bool = False
    errors: tuple[int, ...] = ()

    @property
    def needs_project(self) -> bool:
        return self.scope is not None


def _bucket(path: str) -> tuple[int, str]:
    """The key a path's dynamic routes are filed under: its segment count and first segment
    (a parameter never spans a ``/``, so only routes with the same key can match)."""
    parts = path.split("/", 2)
    return path.count("/"), parts[1] if len(parts) > 1 else ""


class Router:
    """Matches ``(method, path)`` to an endpoint: static paths by dict, the rest by regex among
    the routes with the same method, segment count and first segment (declaration order kept:
    a route whose first segment is a parameter is tried after the literal ones)."""

    def __init__(self, endpoints: list[Endpoint]):
        self.endpoints = list(endpoints)
        self._static: dict[tuple[str, str], Endpoint] = {}
        self._dynamic: dict[str, list[tuple[re.Pattern[str], Endpoint]]] = {}
        # (method, segment count, first segment or "" for a parameter) -> routes, in order
        self._buckets: dict[tuple[str, int, str], list[tuple[re.Pattern[str], Endpoint]]] = {}
        for ep in self.endpoints:
            for path in (ep.path, *ep.aliases):
                if "{" not in path:
                    key = (ep.method, path)
                    if key in self._static:
                        raise ValueError(f"duplicate route {ep.method} {path}")
                    self._static[key] = ep
                else:
                    pattern = re.compile("^" + _PARAM.sub(r"(?P<\1>[^/]+)", re.escape(path).replace(r"\{", "{").replace(r"\}", "}")) + "$")
                    self._dynamic.setdefault(ep.method, []).append((pattern, ep))
                    count, first = _bucket(path)
                    bucket = (ep.method, count, "" if "{" in first else first)
                    self._buckets.setdefault(bucket, []).append((pattern, ep))

    def match(self, method: str, path: str) -> tuple[Endpoint, dict[str, str]]:
        """The endpoint for ``method path`` and its path parameters.

        ``HEAD`` falls back to ``GET``. Raises 404 ``general_route_not_found`` when no route has
        this path, and 405 ``general_not_implemented`` with an ``Allow`` header (the methods the
        path has, RFC 9110 section 15.5.6) when the path exists under other methods.
        """
        for m in (method, "GET") if method == "HEAD" else (method,):
            ep = self._static.get((m, path))
            if ep is not None:
                return ep, {}
            count, first = _bucket(path)
            for key in ((m, count, first), (m, count, "")):
                for pattern, ep in self._buckets.get(key, ()):
                    found = pattern.match(path)
                    if found:
                        return ep, found.groupdict()
        allowed = self.methods_for(path)
        if not allowed:
            raise AppwriteError("general_route_not_found")
        if "GET" in allowed:
            allowed.append("HEAD")
        allow = ", ".join(sorted(set(allowed)))
        raise AppwriteError(
            "general_not_implemented",
            f"The method {method} is not allowed on this route. Allowed methods: {allow}.",
            headers={"Allow": allow},
        )

    def methods_for(self, path: str) -> list[str]:
        """Methods that have a route at ``path`` (the 405 answer's ``Allow`` header)."""
        out = []
        for (m, p) in self._static:
            if p == path:
                out.append(m)
        for m, routes in self._dynamic.items():
            if any(pattern.match(path) for pattern, _ in routes):
                out.append(m)
        return out
