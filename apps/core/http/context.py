"""The request context and response objects that handlers see.

Both are independent of Django's request/response classes, so the same handler runs behind the
Django adapter (ASGI and WSGI) and behind a lean ASGI adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from apps.core.http.auth import Auth


@dataclass(slots=True)
class UploadedPart:
    """A file part of a multipart body: client ``filename``, ``content_type``, size in bytes.

    ``file`` is a readable binary file object positioned at 0.
    """

    filename: str
    content_type: str
    size: int
    file: Any


@dataclass(slots=True)
class Cookie:
    """A ``Set-Cookie`` to send; ``expires`` is a unix timestamp in seconds (0 = in the past)."""

    name: str
    value: str
    expires: int
    samesite: str | None = None
    secure: bool = False
    httponly: bool = True
    path: str = "/"


class ShortBody(Exception):
    """A response stream ended before the bytes its head promised (e.g. a stored file changed
    on disk behind the API during a download). The adapter must not finish the response: the
    connection has to end without it, or the client reads what follows as body bytes."""


@dataclass(slots=True)
class Response:
    """An HTTP response. ``stream`` (optional) replaces ``body``: an object with ``__aiter__``
    (ASGI, yielding ``bytes`` or ``memoryview`` chunks) and ``__iter__`` (WSGI, ``bytes``)."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)
    cookies: list[Cookie] = field(default_factory=list)
    stream: Any = None


def json_response(data: Any, status: int = 200) -> Response:
    """A JSON response (``application/json``) from plain data."""
    return Response(status=status, body=orjson.dumps(data))


def no_content() -> Response:
    """204 with a non-JSON content type (the Python SDK reads Content-Type unconditionally)."""
    return Response(status=204, content_type="text/plain; charset=utf-8")


def text_response(text: str, status: int = 200) -> Response:
    return Response(status=status, body=text.encode(), content_type="text/plain; charset=utf-8")


@dataclass(slots=True)
class RequestContext:
    """One /v1 request as the handlers see it.

    ``headers`` keys are lower-case; ``query`` and ``form`` are ordered ``(name, value)`` pairs;
    ``files`` maps a multipart field name to its :class:`UploadedPart`. ``mode`` is ``"async"``
    or ``"sync"`` and selects the drivers (``db``, ``kv``). The pipeline fills ``project``,
    ``auth``, ``endpoint``, ``path_params`` and ``params`` before the handler runs.
    """

    mode: str
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    peer_ip: str
    scheme: str = "http"
    body: bytes = b""
    form: list[tuple[str, str]] | None = None
    files: dict[str, UploadedPart] = field(default_factory=dict)
    request_id: str = ""
    client_ip: str = ""
    db: Any = None
    kv: Any = None
    project: dict[str, Any] | None = None
    auth: Auth = field(default_factory=Auth)
    endpoint: Any = None
    # Keys of process-local cache entries this request was served from (apps.core.drivers.cache), so a
    # handler can retry with fresh data when a cached entry may be behind another process's write.
    cache_hits: list[Any] = field(default_factory=list)
    path_params: dict[str, str] = field(default_factory=dict)
    params: Any = None
    raw_params: dict[str, Any] = field(default_factory=dict)
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    origin_allowed: bool = False
    # How the request arrived, for the project's protocol switches: "rest", or "graphql" for a
    # field of a GraphQL document run through the pipeline (apps.graphql).
    protocol: str = "rest"

    @property
    def host(self) -> str:
        return self.headers.get("host", "")

    @property
    def project_id(self) -> str:
        return self.project["uid"] if self.project else ""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")
