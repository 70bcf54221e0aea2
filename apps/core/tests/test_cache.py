"""Process-local caches (apps/core/drivers/cache.py): a write in one server process is seen by the next
request in every other process (sessions with their users, tables with their columns).

Two live processes share PostgreSQL and Redis: the ASGI build and the WSGI build (3 gunicorn
workers, each with its own cache). Each read is first made on every process so the entries are
cached there, then the write goes through the other process.
"""

from __future__ import annotations

import os
import time

import pytest

from apps.core.drivers import cache
from conftest import Api

pytestmark = pytest.mark.django_db(transaction=True)

DB = "/tablesdb"


def _until(check, seconds: float = 3.0):
    """Poll ``check()`` until it is truthy: pub/sub delivery to another process is asynchronous
    (sub-millisecond here), so a read right after the writer's answer may race it by a hair."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def _warm(apis: list[Api], path: str, session: str, times: int = 6) -> None:
    for a in apis:
        for _ in range(times):  # reach every gunicorn worker
            assert a.call("GET", path, session=session).status_code == 200


def test_session_delete_and_user_update_reach_every_process(asgi_server, wsgi_server, project):
    asgi, wsgi = Api(asgi_server, project), Api(wsgi_server, project)
    user, session = asgi.signup(name="before")
    _warm([asgi, wsgi], "/account", session)

    r = wsgi.call("PATCH", "/account/name", json={"name": "after"}, session=session)
    assert r.status_code == 200, r.text
    assert _until(lambda: all(asgi.call("GET", "/account", session=session).json()["name"] == "after"
                              for _ in range(3)))

    _warm([asgi, wsgi], "/account", session)
    r = asgi.call("DELETE", "/account/sessions/current", session=session)
    assert r.status_code == 204, r.text
    assert _until(lambda: all(wsgi.call("GET", "/account", session=session).status_code == 401 for _ in range(6)))
    assert asgi.call("GET", "/account", session=session).status_code == 401


def test_blocked_user_is_refused_at_once_in_the_writing_process(asgi_server, project):
    api = Api(asgi_server, project)
    _, session = api.signup()
    _warm([api], "/account", session, times=2)
    assert api.call("PATCH", "/account/status", session=session).status_code == 200
    # Same process: dropped before the answer, no polling.
    assert api.call("GET", "/account", session=session).status_code == 401


def test_new_column_is_usable_from_another_process(asgi_server, wsgi_server, project):
    asgi, wsgi = Api(asgi_server, project), Api(wsgi_server, project)
    assert asgi.call("POST", f"{DB}", json={"databaseId": "c", "name": "c"}, key=True).status_code == 201
    assert asgi.call("POST", f"{DB}/c/tables", key=True,
                     json={"tableId": "t", "name": "t", "permissions": ['read("any")']}).status_code == 201
    r = asgi.call("POST", f"{DB}/c/tables/t/columns/string", key=True, json={"key": "a", "size": 10, "required": False})
    assert r.status_code == 202, r.text
    for a in (asgi, wsgi):
        for n in range(4):  # cache the table (without column b) in every process
            assert a.call("POST", f"{DB}/c/tables/t/rows", key=True,
                          json={"rowId": "unique()", "data": {"a": f"x{n}"}}).status_code == 201
    r = wsgi.call("POST", f"{DB}/c/tables/t/columns/string", key=True, json={"key": "b", "size": 10, "required": False})
    assert r.status_code == 202, r.text

    def created_with_b():
        r = asgi.call("POST", f"{DB}/c/tables/t/rows", key=True, json={"rowId": "unique()", "data": {"b": "y"}})
        return r.status_code == 201 and r.json()["b"] == "y"

    assert _until(created_with_b)

    row = asgi.call("POST", f"{DB}/c/tables/t/rows", key=True, json={"rowId": "r1", "data": {"a": "z"}})
    assert row.status_code == 201
    assert wsgi.call("DELETE", f"{DB}/c/tables/t", key=True).status_code == 204
    assert _until(lambda: asgi.call("GET", f"{DB}/c/tables/t/rows/r1", key=True).status_code == 404)


def test_a_rejection_by_a_cached_table_is_retried_on_the_database_table(asgi_server, project):
    """The column exists in the database but the process's cached table predates it (here: added
    with SQL, so no invalidation is ever sent; in production: another process's invalidation
    still in flight). The write and the query naming it are retried on a fresh table."""
    from django.db import connection

    api = Api(asgi_server, project)
    assert api.call("POST", DB, json={"databaseId": "s", "name": "s"}, key=True).status_code == 201
    assert api.call("POST", f"{DB}/s/tables", key=True, json={"tableId": "t", "name": "t"}).status_code == 201
    r = api.call("POST", f"{DB}/s/tables/t/columns/string", key=True, json={"key": "a", "size": 10, "required": False})
    assert r.status_code == 202, r.text
    for _ in range(2):  # the table, without column b, is now cached
        assert api.call("GET", f"{DB}/s/tables/t/rows", key=True).status_code == 200
    with connection.cursor() as cur:
        cur.execute("INSERT INTO databases_column (table_id, key, kind, required, \"array\", size, spec, created_at, "
                    "updated_at) SELECT t.id, 'b', 'varchar', false, false, 10, '{}', now(), now() "
                    "FROM databases_table t JOIN databases_database d ON d.id = t.database_id "
                    "WHERE d.project_id = %s AND d.uid = 's' AND t.uid = 't'", (project.pk,))
    r = api.call("POST", f"{DB}/s/tables/t/rows", key=True, json={"rowId": "r1", "data": {"b": "new"}})
    assert r.status_code == 201, r.text
    assert r.json()["b"] == "new"
    r = api.call("GET", f"{DB}/s/tables/t/rows", key=True,
                 params={"queries[]": ['{"method":"equal","attribute":"b","values":["new"]}']})
    assert r.status_code == 200 and r.json()["total"] == 1, r.text
    # A request that is wrong on the fresh table too is still refused, once.
    r = api.call("POST", f"{DB}/s/tables/t/rows", key=True, json={"rowId": "r2", "data": {"zz": 1}})
    assert r.status_code == 400 and r.json()["type"] == "row_invalid_structure"


class _Ctx:
    kv = None


def test_a_read_that_raced_an_invalidation_is_not_stored(settings, monkeypatch):
    monkeypatch.setattr(cache, "_active", lambda: True)  # as with its listener subscribed
    settings.LOCAL_CACHE_TTL = 60
    c = cache.LocalCache("test-race")
    seen = cache.epoch()
    cache.drop_local(["user:1"])  # a write committed while the read was in flight
    c.put("k", {"v": 1}, ("user:1",), seen)
    assert c.get("k") is None
    seen = cache.epoch()
    c.put("k", {"v": 2}, ("user:1",), seen)
    assert c.get("k") == {"v": 2}
    cache.drop_local(["user:2"])
    assert c.get("k") == {"v": 2}  # other tags leave it alone
    cache.drop_local(["user:1"])
    assert c.get("k") is None


def test_ttl_zero_turns_caching_off(settings, monkeypatch):
    monkeypatch.setattr(cache, "_active", lambda: True)
    settings.LOCAL_CACHE_TTL = 0
    c = cache.LocalCache("test-off")
    c.put("k", 1, (), cache.epoch())
    assert c.get("k") is None


def test_no_redis_no_cache(settings):
    """Without Redis and without a change check no process could tell the others about a
    write (e.g. two gunicorn workers on one SQLite file), so nothing is cached."""
    settings.REDIS_URL = ""
    settings.LOCAL_CACHE_TTL = 60
    c = cache.LocalCache("test-no-redis")
    c.put("k", 1, (), cache.epoch())
    assert c.get("k") is None


def test_without_redis_a_commit_by_another_connection_empties_the_caches(settings, tmp_path):
    """The ASGI build's SQLite driver lets the caches work without Redis: its own commits keep
    them (its writes invalidate what they change, as with Redis), and a commit made by any
    other connection to the file (here a second one, as another process would) empties them
    before the next cache read."""
    import asyncio
    import sqlite3

    from apps.core.drivers.db.sqlite import SqliteAsync

    settings.REDIS_URL = ""
    settings.LOCAL_CACHE_TTL = 60
    path = str(tmp_path / "embedded.sqlite3")
    c = cache.LocalCache("test-sqlite-watch")

    async def main():
        db = SqliteAsync(path)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            await db.execute("CREATE TABLE t (v int)")
            c.put("k", 1, (), cache.epoch())
            assert c.get("k") == 1
            await db.execute("INSERT INTO t VALUES (1)")  # this connection's own commit
            assert c.get("k") == 1
            other.execute("SELECT count(*) FROM t").fetchone()  # another connection reading
            assert c.get("k") == 1
            other.execute("INSERT INTO t VALUES (2)")  # and committing
            assert c.get("k") is None
            c.put("k", 2, (), cache.epoch())
            assert c.get("k") == 2
            seen = cache.epoch()
            other.execute("INSERT INTO t VALUES (3)")  # a commit while a read was in flight
            c.put("k", 3, (), seen)
            assert c.get("k") is None  # dropped, and that read's value was not stored
        finally:
            other.close()
            await db.close()
        assert c.get("k") is None  # closed: no check, caches off again

    asyncio.run(main())



def _key_status(a: Api) -> int:
    return a.call("GET", "/health", key=True).status_code


def test_api_key_changes_through_the_orm_reach_every_process(asgi_server, wsgi_server, project):
    """API keys are cached per process; the admin (ORM save/delete) drops them everywhere."""
    from apps.projects.models import ApiKey

    asgi, wsgi = Api(asgi_server, project), Api(wsgi_server, project)
    for a in (asgi, wsgi):
        assert all(_key_status(a) == 200 for _ in range(6))  # cached in every process
    key = ApiKey.objects.get(project_id=project.pk)
    key.scopes = ["users.read"]  # no health.read any more
    key.save()
    assert _until(lambda: all(_key_status(a) == 401 for a in (asgi, wsgi) for _ in range(6)))

    key.scopes = ["health.read"]
    key.save()
    assert _until(lambda: all(_key_status(a) == 200 for a in (asgi, wsgi) for _ in range(6)))
    ApiKey.objects.filter(pk=key.pk).delete()
    assert _until(lambda: all(a.call("GET", "/health", key=True).json().get("type") == "user_unauthorized"
                              for a in (asgi, wsgi) for _ in range(6)))


@pytest.mark.faults
def test_listener_turns_caches_off_while_redis_stalls(tmp_path):
    """A Redis that stops answering without closing the socket (SIGSTOP, a partition): the
    listener notices within 2 x REDIS_TIMEOUT and turns this process's caches off, then on again
    once Redis answers (found by a breaker run: a blocking read kept the caches on for the whole
    stall, so another process's logout was not seen)."""
    import shutil
    import signal
    import socket as socketlib
    import subprocess
    import sys
    import time as timelib

    from conftest import ROOT

    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    sock = socketlib.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    redis_proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no"], stdout=subprocess.DEVNULL, cwd=tmp_path)
    try:
        env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{port}/0", "REDIS_TIMEOUT": "0.5",
               "LOCAL_CACHE_TTL": "60"}
        watcher = subprocess.Popen([sys.executable, str(ROOT / "apps" / "core" / "tests" / "listen_probe.py"), "8"],
                                   cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        first = watcher.stdout.readline()  # "0.00 live=False"
        live = watcher.stdout.readline()
        assert "live=True" in live, first + live
        redis_proc.send_signal(signal.SIGSTOP)
        stopped = timelib.monotonic()
        off = watcher.stdout.readline()
        off_after = timelib.monotonic() - stopped
        redis_proc.send_signal(signal.SIGCONT)
        on = watcher.stdout.readline()
        watcher.kill()
        watcher.wait()
        assert "live=False" in off and off_after < 3, (off, off_after)
        assert "live=True" in on, on
    finally:
        redis_proc.send_signal(signal.SIGCONT)
        redis_proc.kill()
        redis_proc.wait()
