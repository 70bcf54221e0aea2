"""The WSGI build's gunicorn worker: sync, with gunicorn's own error pages answered as JSON.

gunicorn refuses malformed or oversized request heads itself, before the app sees them, with an
HTML page (``gunicorn.util.write_error``). This worker lets gunicorn decide as always (which
exception, which status, its log lines) and only replaces the bytes it writes with Appwrite's JSON
error (:func:`apps.core.http.serving.limits.raw_error`): 414 for the request line, 431 for header fields,
400 for other malformed requests, 500 ``general_unknown`` for an app failure gunicorn caught.
Named by ``backend/gunicorn_conf.py``.
"""

from __future__ import annotations

from typing import Any

from gunicorn import util
from gunicorn.http.errors import LimitRequestHeaders
from gunicorn.workers.sync import SyncWorker

from apps.core.http.serving.limits import BAD_REQUEST, HEADERS_TOO_LARGE, LINE_TOO_LONG, TOO_MANY_HEADERS, raw_error


class _Capture:
    """Stands in for the client socket while gunicorn writes its error page."""

    def __init__(self) -> None:
        self.data = b""

    def gettimeout(self) -> float:
        return 0.0  # gunicorn then writes without touching the blocking mode

    def sendall(self, data: bytes) -> None:
        self.data += data


def json_error_for(page: bytes, exc: BaseException) -> bytes:
    """The JSON response replacing gunicorn's error ``page`` (a whole HTTP response) for ``exc``."""
    try:
        status = int(page.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 500
    if status == 414:
        return raw_error(*LINE_TOO_LONG)
    if status == 431:
        too_many = isinstance(exc, LimitRequestHeaders) and str(exc) == "limit request headers fields"
        return raw_error(*(TOO_MANY_HEADERS if too_many else HEADERS_TOO_LARGE))
    if status >= 500:
        return raw_error(status, "Server Error", "general_unknown")
    return raw_error(status, BAD_REQUEST[1])


class JsonErrorSyncWorker(SyncWorker):  # type: ignore[misc]  # gunicorn has no type hints
    """gunicorn's sync worker whose error answers are JSON (see the module docstring)."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException | None) -> None:
        capture = _Capture()
        super().handle_error(req, capture, addr, exc)
        if capture.data:
            try:
                util.write_nonblock(client, json_error_for(capture.data, exc or Exception()))
            except Exception:
                self.log.debug("Failed to send error message.")
