"""The pipelined Redis client (apps/core/drivers/resp.py) against the real Redis: replies reach their own
callers under concurrency, after errors, cancellations and lost connections."""

from __future__ import annotations

import asyncio
import socket
import time
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from apps.core.drivers.kv import KVUnavailable, RedisAsync
from apps.core.drivers.resp import PipelinedRedis, RedisReplyError, Script, encode
from conftest import PrivateRedis, free_port


def _db_url(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", "", ""))


@pytest.mark.parametrize("args, wire", [
    (("GET", "k"), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"),
    (("SET", "clé", b"\x00\r\n", "EX", 5), b"*5\r\n$3\r\nSET\r\n$4\r\ncl\xc3\xa9\r\n$3\r\n\x00\r\n\r\n$2\r\nEX\r\n$1\r\n5\r\n"),
    (("PING",), b"*1\r\n$4\r\nPING\r\n"),
])
def test_commands_are_encoded_as_resp_arrays_of_bulk_strings(args, wire):
    assert encode(args) == wire


@pytest.mark.parametrize("bad", [None, True, ["list"], {"a": 1}])
def test_values_redis_cannot_carry_are_refused_before_sending(bad):
    with pytest.raises(TypeError):
        encode(("SET", "k", bad))


def test_concurrent_calls_each_get_their_own_reply(settings):
    client = PipelinedRedis(settings.REDIS_URL, timeout=5)

    async def run():
        await asyncio.gather(*(client.execute("SET", f"resp:{i}", i) for i in range(500)))
        got = await asyncio.gather(*(client.execute("GET", f"resp:{i}") for i in range(500)))
        await client.execute("DEL", *(f"resp:{i}" for i in range(500)))
        await client.close()
        return got

    assert asyncio.run(run()) == [str(i).encode() for i in range(500)]


def test_an_error_reply_fails_only_its_own_call(settings):
    client = PipelinedRedis(settings.REDIS_URL, timeout=5)

    async def run():
        await client.execute("SET", "resp:text", "not a number")
        results = await asyncio.gather(
            client.execute("INCR", "resp:text"), client.execute("ECHO", "after"), client.execute("NOSUCHCOMMAND"),
            client.execute("ECHO", "last"), return_exceptions=True,
        )
        await client.execute("DEL", "resp:text")
        await client.close()
        return results

    incr, echo, unknown, last = asyncio.run(run())
    assert isinstance(incr, RedisReplyError) and "not an integer" in str(incr)
    assert echo == b"after" and last == b"last"
    assert isinstance(unknown, RedisReplyError)


def test_a_cancelled_caller_does_not_shift_the_replies(settings):
    client = PipelinedRedis(settings.REDIS_URL, timeout=5)

    async def run():
        await client.execute("SET", "resp:a", "A")
        await client.execute("SET", "resp:b", "B")
        first = asyncio.ensure_future(client.execute("GET", "resp:a"))
        await asyncio.sleep(0)  # queued, not answered yet
        first.cancel()
        second = await client.execute("GET", "resp:b")
        await client.execute("DEL", "resp:a", "resp:b")
        await client.close()
        return first.cancelled(), second

    assert asyncio.run(run()) == (True, b"B")


def test_a_killed_connection_fails_pending_calls_and_the_next_call_reconnects(settings):
    client = PipelinedRedis(settings.REDIS_URL, timeout=5)
    admin = redis.Redis.from_url(settings.REDIS_URL)

    async def run():
        await client.execute("PING")
        first = client._proto
        host, port = first.transport.get_extra_info("sockname")[:2]
        admin.client_kill(f"{host}:{port}")
        with pytest.raises(ConnectionError):
            for _ in range(50):  # the kill reaches the loop within a few iterations
                await client.execute("PING")
                await asyncio.sleep(0.01)
        reply = await client.execute("PING")
        second = client._proto
        await client.close()
        return reply, first, second

    reply, first, second = asyncio.run(run())
    assert reply == b"PONG" and second is not first and first.lost


@pytest.mark.parametrize("command", ["MULTI", "select", "SUBSCRIBE", "BLPOP", "CLIENT", b"MULTI", b"select"])
def test_commands_that_would_affect_every_caller_are_refused(settings, command):
    client = PipelinedRedis(settings.REDIS_URL, timeout=5)
    with pytest.raises(ValueError, match="every caller"):
        asyncio.run(client.execute(command, "x"))


def test_the_client_follows_the_running_event_loop(settings):
    """One process-wide client, several loops in turn (tests, tools): each loop gets its own
    connection instead of a protocol bound to a closed loop."""
    client = PipelinedRedis(settings.REDIS_URL, timeout=5)
    assert [asyncio.run(client.execute("PING")) for _ in range(3)] == [b"PONG"] * 3


def _fake_server(behaviour):
    """A local TCP server running ``behaviour(conn)`` per connection in a thread; returns the
    port and a stop function."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()
    conns = []

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conns.append(conn)
            threading.Thread(target=behaviour, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()

    def close():
        stop.set()
        for conn in conns:
            conn.close()
        listener.close()

    return listener.getsockname()[1], conns, close


def test_a_timed_out_call_fails_the_calls_queued_behind_it_at_once():
    """Redis answers in order: when one call's deadline passes, the calls behind it on the same
    stalled connection fail immediately instead of each waiting out its own deadline."""
    port, _, close = _fake_server(lambda conn: None)  # accepts, never answers
    client = PipelinedRedis(f"redis://127.0.0.1:{port}/0", timeout=0.5)

    async def run():
        loop = asyncio.get_running_loop()
        first = asyncio.ensure_future(client.execute("GET", "a"))
        await asyncio.sleep(0.25)
        started = loop.time()
        second = asyncio.ensure_future(client.execute("GET", "b"))
        results = await asyncio.gather(first, second, return_exceptions=True)
        return results, loop.time() - started

    try:
        (first, second), waited = asyncio.run(run())
    finally:
        close()
    assert isinstance(first, TimeoutError)
    assert isinstance(second, ConnectionError) and waited < 0.45  # its own deadline was 0.5 s


def test_a_connect_that_stalls_in_select_leaves_no_socket_open(settings):
    settings.REDIS_TIMEOUT = 0.3
    port, conns, close = _fake_server(lambda conn: None)  # never answers SELECT
    kv = RedisAsync(f"redis://127.0.0.1:{port}/7")

    async def run():
        for _ in range(3):
            with pytest.raises(KVUnavailable):
                await kv.get("key")
            await asyncio.sleep(0.05)  # the connect attempt's own deadline passes too

    def still_open(conn) -> bool:
        conn.setblocking(False)
        try:
            while conn.recv(65536):  # the SELECT the client sent, then b"" once it closed
                pass
            return False
        except BlockingIOError:
            return True  # open: nothing more to read, no end of stream
        except OSError:
            return False  # reset by the client

    try:
        asyncio.run(run())
        time.sleep(0.3)  # let the fake server accept the last connection
        open_conns = [c for c in conns if still_open(c)]
    finally:
        close()
    assert len(conns) == 3  # every call tried a fresh connect (no stale failed attempt reused)
    assert not open_conns


def test_a_reply_before_any_command_is_reported_not_crashed_on():
    def greet(conn):
        conn.sendall(b"-ERR max number of clients reached\r\n")

    port, _, close = _fake_server(greet)
    client = PipelinedRedis(f"redis://127.0.0.1:{port}/0", timeout=1)

    async def run():
        await asyncio.sleep(0)
        with pytest.raises(ConnectionError, match="max number of clients"):
            proto = await client._connection()
            await asyncio.sleep(0.2)  # the greeting arrives before any command
            await proto.send(encode(("PING",)))

    try:
        asyncio.run(run())
    finally:
        close()


@pytest.fixture
def own_redis():
    """A throw-away redis-server: SCRIPT FLUSH and database numbers are server-wide or outside
    REDIS_URL's database, so they are never tried on the shared server."""
    server = PrivateRedis(free_port())
    server.start()
    yield server
    server.stop()


def test_scripts_are_loaded_again_after_the_script_cache_is_flushed(own_redis):
    client = PipelinedRedis(own_redis.url, timeout=5)
    script = Script("return tonumber(ARGV[1]) + 1")

    async def run():
        before = await client.run_script(script, [], [41])
        await client.execute("SCRIPT", "FLUSH")
        after = await client.run_script(script, [], [1])
        await client.close()
        return before, after

    assert asyncio.run(run()) == (42, 2)


def test_the_database_number_of_the_url_is_selected(own_redis):
    client = PipelinedRedis(_db_url(own_redis.url, 5), timeout=5)
    other = redis.Redis.from_url(_db_url(own_redis.url, 5))

    async def run():
        await client.execute("SET", "resp:db", "five", "EX", 30)
        await client.close()

    asyncio.run(run())
    try:
        assert other.get("resp:db") == b"five"
    finally:
        other.delete("resp:db")


def test_a_refused_password_is_a_connection_error(settings):
    parts = urlsplit(settings.REDIS_URL)
    url = urlunsplit((parts.scheme, f"user:wrong@{parts.hostname}:{parts.port or 6379}", "/0", "", ""))
    kv = RedisAsync(url)

    async def run():
        with pytest.raises(KVUnavailable, match="AUTH"):
            await kv.get("key")

    asyncio.run(run())


def test_an_unreachable_redis_fails_fast():
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens here now
    kv = RedisAsync(f"redis://127.0.0.1:{port}/0")

    async def run():
        with pytest.raises(KVUnavailable, match="cannot connect"):
            await kv.ping()

    asyncio.run(run())


@pytest.mark.parametrize("query, verified", [("", True), ("?ssl_cert_reqs=none", False), ("?ssl_cert_reqs=required", True)])
def test_rediss_urls_get_tls_with_redis_py_query_parameters(query, verified):
    import ssl

    client = PipelinedRedis(f"rediss://cache.example:6380/0{query}", timeout=1)
    assert client._ssl is not None
    assert (client._ssl.verify_mode == ssl.CERT_REQUIRED) is verified
    assert client._ssl.check_hostname is verified
    assert PipelinedRedis("redis://cache.example:6379/0", timeout=1)._ssl is None
