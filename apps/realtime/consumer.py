"""The realtime websocket connection: ``GET /v1/realtime?project=<id>`` (Appwrite's realtime
protocol: ``connected``, ``response``, ``event`` and ``error`` frames).

One :class:`Connection` per socket, a member of its project in the process's
:class:`~apps.realtime.hub.Hub`, with two tasks and one signal:

* **reader** - client frames: ``ping``, ``authentication``, ``subscribe``, ``unsubscribe``
  (``messages.py``), at most ``REALTIME_MESSAGES_PER_MINUTE`` per 60 s (over: ``error`` 1013 and
  close 1013).
* :meth:`Connection.deliver` - called by the hub for each event of the project: puts it into a
  bounded queue of ``REALTIME_SEND_QUEUE`` messages without awaiting. A client that reads slower
  than events arrive fills it; it is then closed with 1013 and logged, so memory per connection
  stays bounded instead of growing (no silent loss: the client sees the close and re-fetches).
* **writer** - takes queued messages in order, authorises them for the connection's current roles
  and subscriptions (``delivery.py``) and sends the frames.

On exit the connection leaves the hub, also on ``CancelledError``. All I/O is async-native
(apps.core.drivers.db's async drivers, the pipelined Redis client, redis-py's asyncio client for the
stream): nothing runs on asgiref's single shared thread, where one slow call would stall every
socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import orjson
from django.conf import settings

from apps.accounts.responses import user_model
from apps.core.domain.channels import rewrite_account
from apps.core.http.auth import Auth
from apps.realtime import messages
from apps.realtime.delivery import MESSAGE_TYPE, Subscription, frames_for
from apps.realtime.handshake import (
    TOO_MANY,
    Handshake,
    HandshakeError,
    credential_headers,
    handshake,
    resolve_auth,
)
from apps.realtime.hub import get_hub

log = logging.getLogger("apps.realtime")


class Closing(Exception):
    """Stop the connection with close ``code``."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class Connection:
    """State of one socket; see the module docstring."""

    def __init__(self, scope, receive, send):
        self.scope, self._receive, self._send = scope, receive, send
        self._send_lock = asyncio.Lock()
        self.subscriptions: dict[str, Subscription] = {}
        self.legacy: frozenset[str] = frozenset()
        self.legacy_requested: frozenset[str] = frozenset()
        self.auth = Auth()
        self.credential: dict[str, str] = {}
        self.ctx = None
        self.auth_checked = 0.0
        self.window_start = time.monotonic()
        self.window_count = 0
        self.queue: asyncio.Queue = asyncio.Queue(maxsize=settings.REALTIME_SEND_QUEUE)
        self.overflow = asyncio.Event()

    # --- sending ---------------------------------------------------------------------------------

    async def send_raw(self, text: bytes | str) -> None:
        if isinstance(text, bytes):
            text = text.decode()
        async with self._send_lock:
            await self._send({"type": "websocket.send", "text": text})

    async def send_frame(self, type_: str, data: dict | None = None) -> None:
        frame = {"type": type_} if data is None else {"type": type_, "data": data}
        await self.send_raw(orjson.dumps(frame))

    async def error(self, code: int, message: str) -> None:
        await self.send_frame("error", {"code": code, "message": message})

    async def close(self, code: int) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._send({"type": "websocket.close", "code": code}), 2)

    # --- auth ------------------------------------------------------------------------------------

    @property
    def user_id(self) -> str:
        return self.auth.user_id

    def set_auth(self, auth: Auth, credential: dict[str, str]) -> None:
        """Adopt a credential; ``account`` channels follow the (new) user."""
        self.auth, self.credential, self.auth_checked = auth, credential, time.monotonic()
        for sub in self.subscriptions.values():
            sub.channels = frozenset(rewrite_account(sub.requested, self.user_id))
        self.legacy = frozenset(rewrite_account(sorted(self.legacy_requested), self.user_id))

    async def current_roles(self) -> list[str]:
        """The roles now: the credential is re-resolved when older than ``REALTIME_AUTH_TTL``
        seconds (a deleted session or blocked user stops receiving)."""
        if self.credential and time.monotonic() - self.auth_checked > settings.REALTIME_AUTH_TTL:
            try:
                auth = await resolve_auth(self.ctx, self.credential)
            except Exception:  # invalid now (blocked, expired JWT) or store down: fail closed
                auth = Auth()
            self.set_auth(auth, self.credential)
        return self.auth.roles

    # --- rate limit ------------------------------------------------------------------------------

    def count_message(self) -> bool:
        """Count one client message; False when over ``REALTIME_MESSAGES_PER_MINUTE``."""
        now = time.monotonic()
        if now - self.window_start >= 60:
            self.window_start, self.window_count = now, 0
        self.window_count += 1
        limit = settings.REALTIME_MESSAGES_PER_MINUTE
        return limit <= 0 or self.window_count <= limit

    # --- tasks -----------------------------------------------------------------------------------

    async def reader(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "websocket.disconnect":
                return
            if message["type"] != "websocket.receive":
                continue
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            if not self.count_message():
                await self.error(TOO_MANY, "Too many messages.")
                raise Closing(TOO_MANY)
            await messages.handle(self, text)

    def deliver(self, message: dict) -> None:
        """Queue one published ``message`` (called by the hub; never awaits)."""
        if message.get("type") != MESSAGE_TYPE or self.overflow.is_set():
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.overflow.set()

    async def watch_overflow(self) -> None:
        await self.overflow.wait()
        log.warning("realtime: closing a slow connection (%d events queued, user %r)",
                    self.queue.qsize(), self.user_id)
        raise Closing(TOO_MANY)

    async def writer(self) -> None:
        while True:
            message = await self.queue.get()
            if not self.subscriptions and not self.legacy:
                continue
            roles = await self.current_roles()
            for frame in frames_for(message, self.subscriptions, self.legacy, roles):
                await self.send_raw(frame)

    # --- lifecycle -------------------------------------------------------------------------------

    async def run(self) -> None:
        first = await self._receive()
        if first["type"] != "websocket.connect":
            return
        try:
            accepted: Handshake = await handshake(self.scope)
        except HandshakeError as err:
            await self._send({"type": "websocket.accept"})
            await self.error(err.code, err.message)
            await self.close(err.code)
            return
        except Exception:  # database or store down: an internal error, never a traceback
            log.exception("realtime handshake failed")
            await self._send({"type": "websocket.accept"})
            await self.error(1011, "Server Error")
            await self.close(1011)
            return
        self.ctx = accepted.ctx
        self.legacy_requested = frozenset(accepted.channels)
        self.set_auth(accepted.auth, _credential(accepted))
        await self._send({"type": "websocket.accept"})
        hub, project = get_hub(), self.ctx.project_id
        tasks: list[asyncio.Task] = []
        try:
            await hub.join(project, self)
            tasks.append(asyncio.create_task(self.watch_overflow()))
            await self.send_frame("connected", {
                "channels": sorted(self.legacy), "subscriptions": [],
                "user": user_model(self.auth.user) if self.auth.user else None,
            })
            tasks += [asyncio.create_task(self.reader()), asyncio.create_task(self.writer())]
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                exc = task.exception()
                if isinstance(exc, Closing):
                    await self.close(exc.code)
                elif exc is not None:
                    raise exc
        except Exception:  # no Redis stream position, or a bug: log it, close 1011
            log.exception("realtime connection failed")
            await self.close(1011)
        finally:
            hub.leave(project, self)
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task


def _credential(accepted: Handshake) -> dict[str, str]:
    return credential_headers(accepted.ctx) if accepted.auth.user else {}


async def realtime_app(scope, receive, send) -> None:
    """The websocket ASGI app: ``/v1/realtime`` only (other paths are refused before accept)."""
    if scope.get("path", "").rstrip("/") != "/v1/realtime":
        await send({"type": "websocket.close", "code": 1008})
        return
    await Connection(scope, receive, send).run()
