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
next call reconnects. A call whose deadline passes aborts the connection it used (its reply could
still arrive and nothing would tell it from the next one's): the calls queued behind it on that
connection fail at once, since Redis answers in order and they would wait behind the same stall.
A cancelled caller leaves its future in the queue; its reply is read and dropped, keeping the
order. Commands that change a connection's state or block it (transactions, SELECT, pub/sub,
blocking pops, ...) are refused: they would affect every caller.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import ssl as ssl_module
from typing import Any

import hiredis

# Commands that would change the shared connection's state or stall it for every caller.
REFUSED = frozenset({
    "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "SELECT", "SWAPDB", "AUTH", "HELLO", "RESET",
    "QUIT", "CLIENT", "MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE",
    "SUNSUBSCRIBE", "BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP",
    "WAIT", "WAITAOF", "XREAD", "XREADGROUP",
})


class RedisReplyError(Exception):
    """Redis answered ``-ERR ...`` (or another error reply) to a command."""


def encode(args: tuple[Any, ...]) -> bytes:
    """One command as a RESP array of bulk strings. ``str`` is sent as UTF-8, ``int`` and
    ``float`` as their decimal text, bytes-like objects as their bytes. Raises ``TypeError``
    for anything else (``None``, ``bool``, containers)."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif isinstance(arg, (int, float)) and not isinstance(arg, bool):
            arg = repr(arg).encode()
        elif isinstance(arg, (bytearray, memoryview)):
            arg = bytes(arg)  # len() of a memoryview counts items, not bytes
        elif not isinstance(arg, bytes):
            raise TypeError(f"cannot send {type(arg).__name__} to Redis")
        out.append(b"$%d\r\n" % len(arg))
        out.append(arg)
        out.append(b"\r\n")
    return b"".join(out)


class _Protocol(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self._reader = hiredis.Reader()
        self._pending: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._out: list[bytes] = []
        self._flush_scheduled = False
        self.transport: asyncio.Transport | None = None
        self.lost = False
        self.error = "Redis connection closed"  # what later calls on a lost connection are told

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream connection's transport is a Transport

    def data_received(self, data: Any) -> None:
        self._reader.feed(data)
        pending = self._pending
        while True:
            try:
                reply = self._reader.gets()
            except hiredis.ProtocolError as exc:
                self.abort(ConnectionError(f"Redis protocol error: {exc}"))
                return
            if reply is False:
                return
            if not pending:  # e.g. "-ERR max number of clients reached" before any command
                self.abort(ConnectionError(f"Redis sent an unexpected reply: {reply}"))
                return
            fut = pending.popleft()
            if not fut.done():
                if isinstance(reply, hiredis.ReplyError):
                    fut.set_exception(RedisReplyError(str(reply)))
                else:
                    fut.set_result(reply)

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self.lost:
            self.lost = True
            self.error = f"Redis connection lost: {exc}" if exc else "Redis connection closed"
        self._out.clear()
        self._fail(ConnectionError(self.error))

    def _fail(self, exc: Exception) -> None:
        while self._pending:
            fut = self._pending.popleft()
            if not fut.done():
                fut.set_exception(exc)

    def send(self, data: bytes) -> asyncio.Future[Any]:
        fut = self.loop.create_future()
        if self.lost:
            fut.set_exception(ConnectionError(self.error))
            return fut
        self._pending.append(fut)
        self._out.append(data)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._out and not self.lost:
            data = b"".join(self._out)
            self._out.clear()
            if self.transport is not None:
                self.transport.write(data)

    def abort(self, exc: Exception) -> None:
        """Fail every pending call with ``exc`` now and drop the socket without flushing (a
        plain close would wait for a stalled peer to drain the write buffer)."""
        if not self.lost:
            self.lost = True
            self.error = str(exc)
        self._out.clear()
        self._fail(exc)
        if self.transport is not None:
            self.transport.abort()


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _ssl_context(opts: dict[str, Any]) -> ssl_module.SSLContext:
    """TLS for ``rediss://``: the system CAs, or ``?ssl_ca_certs=<file>``; ``?ssl_cert_reqs=none``
    turns verification off (redis-py's query parameters, so one URL serves both clients)."""
    context = ssl_module.create_default_context(cafile=opts.get("ssl_ca_certs"))
    if str(opts.get("ssl_cert_reqs", "")).lower() in ("none", str(int(ssl_module.CERT_NONE))):
        context.check_hostname = False
        context.verify_mode = ssl_module.CERT_NONE
    return context


class PipelinedRedis:
    """Redis over one shared, pipelined connection per event loop (see the module docstring).

    ``url`` is a ``redis://``, ``rediss://`` or ``unix://`` URL (parsed by redis-py: user,
    password and ``/db`` apply). ``timeout`` (seconds) bounds connecting and each call. Methods
    raise :class:`ConnectionError` (unreachable, lost), :class:`TimeoutError` (no answer in
    time), :class:`RedisReplyError` (Redis refused the command) or ``ValueError`` (a command in
    :data:`REFUSED`).
    """

    def __init__(self, url: str, timeout: float):
        from redis.connection import parse_url

        opts = parse_url(url)
        self._host = opts.get("host", "localhost")
        self._port = int(opts.get("port", 6379))
        self._path = opts.get("path")
        self._ssl = _ssl_context(opts) if url.startswith("rediss://") else None
        self._hello: list[tuple[Any, ...]] = []
        if opts.get("password") is not None:
            user = opts.get("username")
            self._hello.append(("AUTH", user, opts["password"]) if user else ("AUTH", opts["password"]))
        if int(opts.get("db") or 0):
            self._hello.append(("SELECT", int(opts["db"])))
        self._timeout = timeout
        self._proto: _Protocol | None = None
        self._connecting: asyncio.Task[Any] | None = None

    async def _connection(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        proto = self._proto
        if proto is not None and not proto.lost and proto.loop is loop:
            return proto
        task = self._connecting
        if task is None or task.get_loop() is not loop:  # one attempt shared by every waiter
            task = self._connecting = loop.create_task(self._connect(loop))
            task.add_done_callback(_retrieve)  # its waiters may all have given up
        return await asyncio.shield(task)

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Protocol:
        proto = None
        try:
            async with asyncio.timeout(self._timeout):
                if self._path:
                    _, proto = await loop.create_unix_connection(lambda: _Protocol(loop), self._path)
                else:
                    _, proto = await loop.create_connection(lambda: _Protocol(loop), self._host, self._port,
                                                            ssl=self._ssl)
                for command in self._hello:
                    await proto.send(encode(command))
        except BaseException as exc:
            if proto is not None:
                proto.abort(ConnectionError("Redis connection setup failed"))
            if isinstance(exc, TimeoutError):
                raise TimeoutError(f"connecting to Redis took over {self._timeout} s") from None
            if isinstance(exc, RedisReplyError):
                raise ConnectionError(f"Redis refused {command[0]}: {exc}") from None
            if isinstance(exc, OSError):
                raise ConnectionError(f"cannot connect to Redis: {exc}") from None
            raise
        finally:
            if self._connecting is asyncio.current_task():
                self._connecting = None
        self._proto = proto
        return proto

    async def execute(self, *args: Any) -> Any:
        """Send one command and return its reply (``bytes``, ``int``, ``list`` or ``None``)."""
        name = args[0].decode("latin-1") if isinstance(args[0], (bytes, bytearray)) else str(args[0])
        if name.upper() in REFUSED:
            raise ValueError(f"{args[0]} would affect every caller of the shared connection")
        proto = None
        try:
            async with asyncio.timeout(self._timeout):
                proto = await self._connection()
                return await proto.send(encode(args))
        except TimeoutError:
            if proto is not None:
                proto.abort(ConnectionError("Redis connection aborted: a call behind this one timed out"))
                if self._proto is proto:
                    self._proto = None
            raise TimeoutError(f"no answer from Redis within {self._timeout} s") from None

    async def run_script(self, script: Script, keys: list[Any], args: list[Any]) -> Any:
        """``EVALSHA`` of ``script``, falling back to ``EVAL`` once when Redis lost the script
        cache (``NOSCRIPT``: restart, ``SCRIPT FLUSH``, failover). Each of the two calls has
        its own deadline."""
        try:
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)
        except RedisReplyError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        return await self.execute("EVAL", script.source, len(keys), *keys, *args)

    async def close(self) -> None:
        """Abort the connection and any connect in progress (lifespan shutdown)."""
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        self._connecting = None
        if self._proto is not None:
            self._proto.abort(ConnectionError("Redis client closed"))
            self._proto = None


class Script:
    """A Lua script known by its SHA-1 (what ``EVALSHA`` names it by)."""

    def __init__(self, source: str):
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()
