"""The WSGI build's counterpart of the lean adapter's leave watch: a client that disconnects
while its request waits on PostgreSQL gets that statement cancelled.

A gunicorn sync worker runs one request at a time in its main thread, blocked in libpq while a
statement runs. One daemon thread per worker process looks, every ``PERIOD`` seconds while a
request has run longer than that, whether the client's socket (``gunicorn.socket``) has reached
end-of-file; if so it asks PostgreSQL to cancel the request's running statement
(``Connection.cancel_safe``, meant to be called from another thread). The statement then fails
with ``query_canceled`` (answered 408 ``database_timeout`` to nobody), a transaction rolls back,
and the worker is free for the next client. A request costs two assignments under an
uncontended lock; other WSGI servers (no ``gunicorn.socket``) are not watched.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from typing import Any

log = logging.getLogger("apps.core.http")

PERIOD = 0.05  # seconds

_lock = threading.Lock()
_current: tuple[Any, ...] | None = None  # (client socket, Django connection wrapper, started) of the running request
_thread: threading.Thread | None = None


def _client_gone(sock: socket.socket) -> bool:
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""  # data would be a pipelined request: stay
    except (OSError, ValueError):  # closed or reset
        return True


def _watch() -> None:
    while True:
        time.sleep(PERIOD)
        current = _current
        if current is None or time.monotonic() - current[2] < PERIOD:
            continue
        with _lock:
            if _current is not current or not _client_gone(current[0]):
                continue
            raw = current[1].connection  # psycopg connection of the request's thread, or None
            if raw is None:
                continue
            try:
                raw.cancel_safe(timeout=2)
                log.info("client left: its running statement was cancelled")
            except Exception:  # noqa: BLE001 - nothing running, or the server unreachable: nothing to stop
                pass
            globals()["_current"] = None  # one cancel per request


def start(environ: dict[str, Any]) -> bool:
    """Watch the request whose WSGI ``environ`` this is (until :func:`finish`); False when it
    cannot be watched (not gunicorn)."""
    global _current, _thread
    sock = environ.get("gunicorn.socket")
    if sock is None:
        return False
    from django.db import connections

    if _thread is None:
        _thread = threading.Thread(target=_watch, name="leave-watch", daemon=True)
        _thread.start()
    wrapper = connections["default"]  # this thread's wrapper (the watcher has its own)
    with _lock:
        _current = (sock, wrapper, time.monotonic())
    return True


def finish() -> None:
    global _current
    with _lock:
        _current = None
