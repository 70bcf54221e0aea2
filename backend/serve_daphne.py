"""Daphne with a graceful drain and the ASGI lifespan: ``python -m backend.serve_daphne [module:app]``.

Started by :mod:`backend.serve` when ``ASGI_SERVER=daphne``. Daphne 4.2 alone, on SIGTERM, stops
its Twisted reactor at once and cancels every running request; it never sends the lifespan
scope, so the pools in ``apps.core.http.serving.asgi_app`` would not be closed. This runner uses daphne's
own ``Server`` and adds, on SIGTERM or SIGINT:

1. stop listening (new connections are refused, the load balancer routes elsewhere);
2. close open websockets with code 1001 (going away, RFC 6455 §7.4.1);
3. wait up to ``SERVER_GRACEFUL_TIMEOUT`` seconds for in-flight HTTP requests to finish;
4. run the lifespan shutdown (closes the PostgreSQL and Redis pools), then stop the reactor.

Daphne buffers whole request bodies in memory: it must only run behind a
proxy whose body cap bounds that (the compose ``lb`` service: ``client_max_body_size``).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import signal
import sys
import time

log = logging.getLogger("backend.serve")


class Lifespan:
    """Drives an ASGI app's lifespan scope: ``await startup()``, later ``await shutdown()``."""

    def __init__(self, app):
        self._app = app
        self._inbox: asyncio.Queue = asyncio.Queue()
        self._events: dict[str, asyncio.Event] = {}
        self._task: asyncio.Task | None = None

    async def _send(self, message: dict) -> None:
        kind = message["type"]
        if kind.endswith(".failed"):
            log.error("lifespan: %s %s", kind, message.get("message", ""))
        self._events.setdefault(kind.rsplit(".", 1)[0], asyncio.Event()).set()

    async def _step(self, phase: str, timeout: float) -> None:
        if self._task is None:
            scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
            self._task = asyncio.ensure_future(self._app(scope, self._inbox.get, self._send))
        done = self._events.setdefault(f"lifespan.{phase}", asyncio.Event())
        await self._inbox.put({"type": f"lifespan.{phase}"})
        waiter = asyncio.ensure_future(done.wait())
        await asyncio.wait({waiter, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

    async def startup(self, timeout: float = 30) -> None:
        await self._step("startup", timeout)

    async def shutdown(self, timeout: float = 30) -> None:
        await self._step("shutdown", timeout)


def main(target: str = "backend.asgi:application") -> None:
    """Serve ``target`` (``module:attribute``; tests pass a small websocket app) until SIGTERM."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
    # daphne.server installs Twisted's asyncio reactor; it must be imported before anything
    # else imports twisted.internet.reactor.
    import django
    from daphne.access import AccessLogGenerator
    from daphne.endpoints import build_endpoint_description_strings
    from daphne.server import Server
    from daphne.ws_protocol import WebSocketProtocol
    from django.conf import settings
    from twisted.internet import reactor

    django.setup()
    module, _, attr = target.partition(":")
    application = getattr(importlib.import_module(module), attr)

    class DrainingServer(Server):
        """Daphne's server, remembering its listening ports so they can be closed."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.ports = []

        def listen_success(self, port):
            self.ports.append(port)
            super().listen_success(port)

    lifespan = Lifespan(application)
    server = DrainingServer(
        application=application,
        endpoints=build_endpoint_description_strings(host=settings.BIND_HOST, port=settings.PORT),
        signal_handlers=False,
        action_logger=AccessLogGenerator(sys.stdout) if settings.SERVER_ACCESS_LOG else None,
        # Sockets not closed by their app are dropped this long after disconnect.
        application_close_timeout=settings.SERVER_GRACEFUL_TIMEOUT,
        server_name="",
    )
    stopping = False

    def in_flight() -> int:
        # A request is listed from its request line on (daphne's WebRequest), before its body
        # is in and its app started, and marked "disconnected" once its response is finished.
        busy = 0
        for protocol, details in list(server.connections.items()):
            if isinstance(protocol, WebSocketProtocol) or "disconnected" in details:
                continue
            task = details.get("application_instance")
            if task is None or not task.done():
                busy += 1
        return busy

    async def drain() -> None:
        try:
            for port in server.ports:
                port.stopListening()
            sockets = [p for p in list(server.connections) if isinstance(p, WebSocketProtocol)]
            for protocol in sockets:
                # autobahn's public sendClose() refuses 1001 from a server; the frame method doesn't.
                protocol.sendCloseFrame(code=1001, isReply=False)
            deadline = time.monotonic() + settings.SERVER_GRACEFUL_TIMEOUT
            while in_flight() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            log.info("daphne: stopped listening, closed %d websocket(s) with 1001, %d request(s) left after drain",
                     len(sockets), in_flight())
            await lifespan.shutdown()
        except Exception:
            log.exception("daphne: error during graceful shutdown")
        finally:
            reactor.stop()

    def on_signal() -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            asyncio.ensure_future(drain())

    def on_ready() -> None:
        loop = asyncio.get_event_loop()
        loop.add_signal_handler(signal.SIGTERM, on_signal)
        loop.add_signal_handler(signal.SIGINT, on_signal)
        asyncio.ensure_future(lifespan.startup())

    server.ready_callable = on_ready
    server.run()


if __name__ == "__main__":
    main(*sys.argv[1:2])
