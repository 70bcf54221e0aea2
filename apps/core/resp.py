"""A pipelined asyncio Redis client for the ASGI hot path: one connection, many callers.

Every coroutine on the loop shares one TCP (or TLS, or Unix socket) connection. A command is
encoded to RESP (https://redis.io/docs/latest/develop/reference/protocol-spec/), appended to a
write buffer that is flushed once per loop iteration, and answered through a future taken from a
FIFO queue: Redis answers the commands of one connection in order, so the n-th reply belongs to
the n-th pending future. Replies are parsed by ``hiredis`` (C).

Why not ``redis.asyncio``: per command it checks a connection out of a pool (an asyncio lock and
condition), writes, reads with its own timers and checks it back in; that cost was 13-15 % of the
ASGI process's CPU under the ``mix`` load test. Here a command costs one future and a share of
one ``write``. ``redis-py`` stays for the sync client, pub/sub and URL parsing.

Failure model: a lost connection fails every pending call with :class:`ConnectionError` and the
next call reconnects. A call whose deadline passes closes the connection (its reply could still
arrive and nothing would tell it from the next one's), so the other pending calls fail fast
instead of waiting for a server that stopped answering. A cancelled caller leaves its future in
the queue; its reply is read and dropped, keeping the order.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import ssl as ssl_module

import hiredis


class RedisReplyError(Exception):
    """Redis answered ``-ERR ...`` (or another error reply) to a command."""


def encode(args: tuple) -> bytes:
    """One command as a RESP array of bulk strings. ``str`` is sent as UTF-8, ``int`` and
    ``float`` as their decimal text, ``bytes`` as is."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
            arg = repr(arg).encode()
        elif not isinstance(arg, (bytes, bytearray, memoryview)):
            raise TypeError(f"cannot send {type(arg).__name__} to Redis")
        out.append(b"$%d\r\n" % len(arg))
        out.append(bytes(arg))
        out.append(b"\r\n")
    return b"".join(out)


class _Protocol(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop = loop
        self._reader = hiredis.Reader()
        self._pending: collections.deque[asyncio.Future] = collections.deque()
        self._out: list[bytes] = []
        self._flush_scheduled = False
        self.transport: asyncio.Transport | None = None
        self.lost = False

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self._reader.feed(data)
        pending = self._pending
        while True:
            try:
                reply = self._reader.gets()
            except hiredis.ProtocolError as exc:
                self._fail(ConnectionError(f"Redis protocol error: {exc}"))
                self.transport.close()
                return
            if reply is False:
                return
            fut = pending.popleft()
            if not fut.done():
                if isinstance(reply, hiredis.ReplyError):
                    fut.set_exception(RedisReplyError(str(reply)))
                else:
                    fut.set_result(reply)

    def connection_lost(self, exc):
        self.lost = True
        self._fail(ConnectionError(f"Redis connection lost: {exc}" if exc else "Redis connection closed"))

    def _fail(self, exc: Exception) -> None:
        while self._pending:
            fut = self._pending.popleft()
            if not fut.done():
                fut.set_exception(exc)

    def send(self, data: bytes) -> asyncio.Future:
        fut = self._loop.create_future()
        if self.lost:
            fut.set_exception(ConnectionError("Redis connection closed"))
            return fut
        self._pending.append(fut)
        self._out.append(data)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._out and not self.lost:
            data = b"".join(self._out)
            self._out.clear()
            self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None and not self.lost:
            self.transport.close()


def _ssl_context(opts: dict) -> ssl_module.SSLContext:
    """TLS for ``rediss://``: the system CAs, or ``?ssl_ca_certs=<file>``; ``?ssl_cert_reqs=none``
    turns verification off (redis-py's query parameters, so one URL serves both clients)."""
    context = ssl_module.create_default_context(cafile=opts.get("ssl_ca_certs"))
    if str(opts.get("ssl_cert_reqs", "")).lower() in ("none", str(int(ssl_module.CERT_NONE))):
        context.check_hostname = False
        context.verify_mode = ssl_module.CERT_NONE
    return context


class PipelinedRedis:
    """Redis over one shared, pipelined connection (see the module docstring).

    ``url`` is a ``redis://``, ``rediss://`` or ``unix://`` URL (parsed by redis-py: user,
    password and ``/db`` apply). ``timeout`` (seconds) bounds connecting and each call. Methods
    raise :class:`ConnectionError` (unreachable, lost), :class:`TimeoutError` (no answer in
    time) or :class:`RedisReplyError` (Redis refused the command).
    """

    def __init__(self, url: str, timeout: float):
        from redis.connection import parse_url

        opts = parse_url(url)
        self._host = opts.get("host", "localhost")
        self._port = int(opts.get("port", 6379))
        self._path = opts.get("path")
        self._ssl = _ssl_context(opts) if url.startswith("rediss://") else None
        self._hello: list[tuple] = []
        if opts.get("password") is not None:
            user = opts.get("username")
            self._hello.append(("AUTH", user, opts["password"]) if user else ("AUTH", opts["password"]))
        if int(opts.get("db") or 0):
            self._hello.append(("SELECT", int(opts["db"])))
        self._timeout = timeout
        self._proto: _Protocol | None = None
        self._connecting: asyncio.Future | None = None

    async def _connection(self) -> _Protocol:
        proto = self._proto
        if proto is not None and not proto.lost:
            return proto
        if self._connecting is None:  # one connect attempt shared by every waiting caller
            self._connecting = asyncio.ensure_future(self._connect())
        connecting = self._connecting
        try:
            return await asyncio.shield(connecting)
        finally:
            if connecting.done() and self._connecting is connecting:
                self._connecting = None

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._timeout):
                if self._path:
                    _, proto = await loop.create_unix_connection(lambda: _Protocol(loop), self._path)
                else:
                    _, proto = await loop.create_connection(lambda: _Protocol(loop), self._host, self._port,
                                                            ssl=self._ssl)
                try:
                    for command in self._hello:
                        await proto.send(encode(command))
                except RedisReplyError as exc:
                    proto.close()
                    raise ConnectionError(f"Redis refused {command[0]}: {exc}") from None
        except TimeoutError:
            raise TimeoutError(f"connecting to Redis took over {self._timeout} s") from None
        except OSError as exc:
            raise ConnectionError(f"cannot connect to Redis: {exc}") from None
        self._proto = proto
        return proto

    async def execute(self, *args):
        """Send one command and return its reply (``bytes``, ``int``, ``list`` or ``None``)."""
        try:
            async with asyncio.timeout(self._timeout):
                proto = await self._connection()
                return await proto.send(encode(args))
        except TimeoutError:
            self._drop()
            raise TimeoutError(f"no answer from Redis within {self._timeout} s") from None

    async def run_script(self, script: "Script", keys: list, args: list):
        """``EVALSHA`` of ``script``, falling back to ``EVAL`` once when Redis lost the script
        cache (``NOSCRIPT``: restart, ``SCRIPT FLUSH``, failover)."""
        try:
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)
        except RedisReplyError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        return await self.execute("EVAL", script.source, len(keys), *keys, *args)

    def _drop(self) -> None:
        if self._proto is not None:
            self._proto.close()
            self._proto = None

    async def close(self) -> None:
        self._drop()


class Script:
    """A Lua script known by its SHA-1 (what ``EVALSHA`` names it by)."""

    def __init__(self, source: str):
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()
