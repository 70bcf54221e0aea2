"""The pipelined Redis client (apps/core/resp.py) against the real Redis: replies reach their own
callers under concurrency, after errors, cancellations and lost connections."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from apps.core.kv import KVUnavailable, RedisAsync
from apps.core.resp import PipelinedRedis, RedisReplyError, Script, encode


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
    client = PipelinedRedis(_db_url(settings.REDIS_URL, 2), timeout=5)

    async def run():
        await asyncio.gather(*(client.execute("SET", f"resp:{i}", i) for i in range(500)))
        got = await asyncio.gather(*(client.execute("GET", f"resp:{i}") for i in range(500)))
        await client.execute("DEL", *(f"resp:{i}" for i in range(500)))
        await client.close()
        return got

    assert asyncio.run(run()) == [str(i).encode() for i in range(500)]


def test_an_error_reply_fails_only_its_own_call(settings):
    client = PipelinedRedis(_db_url(settings.REDIS_URL, 2), timeout=5)

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
    client = PipelinedRedis(_db_url(settings.REDIS_URL, 2), timeout=5)

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
    client = PipelinedRedis(_db_url(settings.REDIS_URL, 2), timeout=5)
    admin = redis.Redis.from_url(settings.REDIS_URL)

    async def run():
        client_id = await client.execute("CLIENT", "ID")
        await client.execute("CLIENT", "SETNAME", "resp-test")
        admin.client_kill_filter(_id=client_id)
        with pytest.raises(ConnectionError):
            for _ in range(50):  # the kill reaches the loop within a few iterations
                await client.execute("PING")
                await asyncio.sleep(0.01)
        reply = await client.execute("PING")
        new_id = await client.execute("CLIENT", "ID")
        await client.close()
        return reply, client_id, new_id

    reply, old_id, new_id = asyncio.run(run())
    assert reply == b"PONG" and new_id != old_id


def test_scripts_are_loaded_again_after_the_script_cache_is_flushed(settings):
    client = PipelinedRedis(_db_url(settings.REDIS_URL, 2), timeout=5)
    script = Script("return tonumber(ARGV[1]) + 1")

    async def run():
        before = await client.run_script(script, [], [41])
        await client.execute("SCRIPT", "FLUSH")
        after = await client.run_script(script, [], [1])
        await client.close()
        return before, after

    assert asyncio.run(run()) == (42, 2)


def test_the_database_number_of_the_url_is_selected(settings):
    client = PipelinedRedis(_db_url(settings.REDIS_URL, 5), timeout=5)
    other = redis.Redis.from_url(_db_url(settings.REDIS_URL, 5))

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
