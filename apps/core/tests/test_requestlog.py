"""The request log (``REQUEST_LOG``; :mod:`apps.core.http.requestlog`): on live servers, each /v1
request lands in ``core_requestlog`` within a few seconds with its route template, status,
project, caller and duration, errors included; with the log off nothing is written; entries past
``REQUEST_LOG_DAYS`` are deleted by the worker's periodic job."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest
import requests

from conftest import make_project, start_server


@pytest.fixture(scope="module", params=["asgi", "wsgi"])
def logged(request, live_env):
    server = start_server(request.param, {**live_env, "REQUEST_LOG": "true"})
    yield server
    server.stop()


def _entries(blocker, request_ids: list[str], expected: int, timeout: float = 8.0) -> dict[str, object]:
    """The log's entries of ``request_ids`` by request ID, once ``expected`` of them are there
    (or the timeout passed)."""
    from apps.core.models import RequestLog

    deadline = time.monotonic() + timeout
    while True:
        with blocker.unblock():
            found = {e.request_id: e for e in RequestLog.objects.filter(request_id__in=request_ids)}
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _call(server, method: str, path: str, agent: str, project: str = "", key: str = "") -> requests.Response:
    headers = {"User-Agent": agent}
    if project:
        headers["X-Appwrite-Project"] = project
    if key:
        headers["X-Appwrite-Key"] = key
    return requests.request(method, server.endpoint + path, headers=headers, timeout=10)


def test_requests_and_errors_are_logged_with_their_route(logged, django_db_blocker):
    project = make_project(django_db_blocker)
    agent = f"reqlog-test/{uuid.uuid4().hex}"
    missing = f"db{uuid.uuid4().hex[:10]}"
    answers = [
        _call(logged, "GET", "/tablesdb", agent, project.id, project.key),  # 200, a key
        _call(logged, "GET", f"/tablesdb/{missing}", agent, project.id, project.key),  # 404 database_not_found
        _call(logged, "GET", "/users", agent, project.id),  # 401: a guest without the scope
        _call(logged, "GET", "/no/such/route", agent, project.id),  # 404 before any project lookup
    ]
    assert [a.status_code for a in answers] == [200, 404, 401, 404]
    ids = [a.headers["X-Request-Id"] for a in answers]
    found = _entries(django_db_blocker, ids, len(ids))
    assert set(found) == set(ids), f"logged: {sorted(found)}"
    listed, missing_db, guest, unrouted = (found[i] for i in ids)

    assert (listed.method, listed.route, listed.path, listed.status) == ("GET", "/v1/tablesdb", "/v1/tablesdb", 200)
    assert listed.project == project.id and listed.actor.startswith("key:")
    assert missing_db.route == "/v1/tablesdb/{databaseId}" and missing_db.path == f"/v1/tablesdb/{missing}"
    assert missing_db.status == 404
    assert (guest.route, guest.status, guest.actor, guest.project) == ("/v1/users", 401, "guest", project.id)
    # No route matched: the route is the path itself, and no project was looked up.
    assert (unrouted.route, unrouted.status, unrouted.project) == ("/v1/no/such/route", 404, "")
    for entry in found.values():
        assert entry.duration_ms > 0 and entry.user_agent == agent and entry.ip == "127.0.0.1"
        assert abs((entry.time - dt.datetime.now(dt.UTC)).total_seconds()) < 60


def test_a_long_user_agent_and_path_are_cut(logged, django_db_blocker):
    agent = "x" * 1000
    answer = _call(logged, "GET", "/" + "p" * 600, agent)
    assert answer.status_code == 404
    request_id = answer.headers["X-Request-Id"]
    entry = _entries(django_db_blocker, [request_id], 1)[request_id]
    assert len(entry.user_agent) == 255 and len(entry.path) == 255 and entry.path.startswith("/v1/ppp")


def test_nothing_is_written_when_the_log_is_off(asgi_server, wsgi_server, django_db_blocker):
    agent = f"reqlog-off/{uuid.uuid4().hex}"
    ids = [_call(server, "GET", "/health/version", agent).headers["X-Request-Id"]
           for server in (asgi_server, wsgi_server) for _ in range(3)]
    time.sleep(2.5)  # more than two flush intervals of a log that would be on
    assert _entries(django_db_blocker, ids, 1, timeout=0) == {}


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_shutdown_writes_what_is_buffered(kind, live_env, django_db_blocker):
    """A server stopped right after answering writes its buffer: ASGI at lifespan shutdown, a
    gunicorn worker at its exit."""
    server = start_server(kind, {**live_env, "REQUEST_LOG": "true"})
    try:
        ids = [_call(server, "GET", "/health/version", "reqlog-stop").headers["X-Request-Id"] for _ in range(5)]
    finally:
        server.stop()
    assert set(_entries(django_db_blocker, ids, len(ids), timeout=0)) == set(ids)


def test_retention_deletes_old_entries(django_db_setup, django_db_blocker, settings, monkeypatch):
    from apps.core.http import requestlog
    from apps.core.http.requestlog import delete_expired
    from apps.core.models import RequestLog
    from apps.core.tasks.worker import _periodic

    assert delete_expired in _periodic  # every worker runs it on each heartbeat
    settings.REQUEST_LOG_DAYS = 3
    now = dt.datetime.now(dt.UTC)
    tag = uuid.uuid4().hex[:16]
    ages = {"old": 10, "just-over": 3.01, "recent": 2.9, "new": 0}
    with django_db_blocker.unblock():
        RequestLog.objects.bulk_create([
            RequestLog(time=now - dt.timedelta(days=days), method="GET", route="/v1/x", path="/v1/x", status=200,
                       duration_ms=1.0, request_id=f"{tag}{name}"[:32], user_agent=name)
            for name, days in ages.items()])
        try:
            with monkeypatch.context() as bounded:  # one run deletes at most DELETE_BATCHES x DELETE_BATCH
                bounded.setattr(requestlog, "DELETE_BATCH", 1)
                bounded.setattr(requestlog, "DELETE_BATCHES", 1)
                assert delete_expired(now) == 1
            assert delete_expired(now) >= 1
            left = set(RequestLog.objects.filter(request_id__startswith=tag).values_list("user_agent", flat=True))
            assert left == {"recent", "new"}
            assert delete_expired(now) == 0
        finally:
            RequestLog.objects.filter(request_id__startswith=tag).delete()


class _Refusing:
    """A database whose every statement fails."""

    vendor = "postgresql"

    def dt(self, value):
        return value

    async def execute(self, sql, params=()):
        raise RuntimeError("database gone")


def _ctx(i: int):
    from apps.core.http.context import RequestContext

    ctx = RequestContext(mode="sync", method="GET", path=f"/ping/{i}", query=[], headers={}, peer_ip="127.0.0.1")
    ctx.request_id = f"r{i}"
    return ctx


def test_the_buffer_drops_its_oldest_past_its_bound_and_a_failed_batch_is_dropped(monkeypatch, caplog):
    """In-process, no flusher running: past ``MAX_BUFFERED`` the oldest entries go (counted and
    logged), and a batch the database refuses is logged and dropped, never raised."""
    from apps.core.drivers.runtime import run_sync
    from apps.core.http import requestlog
    from apps.core.http.context import Response

    monkeypatch.setattr(requestlog, "MAX_BUFFERED", 5)
    monkeypatch.setattr(requestlog, "_buffer", requestlog.deque(maxlen=5))
    monkeypatch.setattr(requestlog._flusher, "running", True)  # no flusher is started
    monkeypatch.setitem(requestlog.stats, "dropped", 0)
    started = time.perf_counter()
    for i in range(8):
        requestlog.record(_ctx(i), Response(status=200), started)
    assert requestlog.stats["dropped"] == 3
    assert [e[9] for e in requestlog._buffer] == ["r3", "r4", "r5", "r6", "r7"]
    failed = requestlog.stats["failed"]
    with caplog.at_level("WARNING", logger="apps.core.requestlog"):
        assert run_sync(requestlog.flush(_Refusing())) == 0
    assert requestlog.stats["failed"] == failed + 5 and not requestlog._buffer
    assert "3 entries dropped" in caplog.text and "5 entries could not be written" in caplog.text


def test_an_impersonated_request_names_the_impersonator(logged, django_db_blocker):
    """The caller of a request made as another user (impersonation) is the impersonator."""
    from conftest import Api

    api = Api(logged, make_project(django_db_blocker))
    operator, op = api.signup()
    target, _ = api.signup()
    assert api.call("PATCH", f"/users/{operator['$id']}/impersonator", key=True,
                    json={"impersonator": True}).status_code == 200
    r = api.call("GET", "/account", session=op, headers={"X-Appwrite-Impersonate-User-Id": target["$id"]})
    assert r.status_code == 200 and r.json()["$id"] == target["$id"]
    found = _entries(django_db_blocker, [r.headers["X-Request-Id"]], 1)
    assert [e.actor for e in found.values()] == [f"user:{operator['$id']}"]
