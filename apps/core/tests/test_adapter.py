"""The Django adapter creates no thread and makes no sync<->async hop of its own (ASGI), and
creates no event loop or thread per request (WSGI). Checked in-process by recording every
``sync_to_async`` call, event loop and thread started while requests are served."""

from __future__ import annotations

import asyncio
import io
import threading

import pytest
from asgiref.sync import SyncToAsync


@pytest.fixture
def record(monkeypatch):
    calls: dict[str, list] = {"sync_to_async": [], "loops": [], "threads": []}
    original_call = SyncToAsync.__call__
    original_loop = asyncio.new_event_loop
    original_start = threading.Thread.start

    async def spy_call(self, *args, **kwargs):
        calls["sync_to_async"].append(getattr(self.func, "__module__", "") + "." + getattr(self.func, "__qualname__", repr(self.func)))
        return await original_call(self, *args, **kwargs)

    def spy_loop(*a, **k):
        calls["loops"].append(1)
        return original_loop(*a, **k)

    def spy_start(self, *a, **k):
        calls["threads"].append(self.name)
        return original_start(self, *a, **k)

    monkeypatch.setattr(SyncToAsync, "__call__", spy_call)
    monkeypatch.setattr(asyncio, "new_event_loop", spy_loop)
    monkeypatch.setattr(threading.Thread, "start", spy_start)
    return calls


def _asgi_get(app, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
    sent = []

    state = {"sent_body": False}

    async def receive():
        if not state["sent_body"]:
            state["sent_body"] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client stays connected

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), *headers], "client": ("127.0.0.1", 5000), "server": ("testserver", 80)}

    async def run():
        await app(scope, receive, send)

    asyncio.run(run())
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_lean_adapter_makes_no_hop_and_starts_no_thread(record, django_db_blocker):
    """The default ASGI path (V1_ADAPTER=lean): no Django machinery at all on /v1."""
    from backend.asgi import application

    with django_db_blocker.unblock():
        status, body = _asgi_get(application, "/v1/health/version", [])
    assert status == 200 and b"version" in body
    assert record["sync_to_async"] == [] and record["threads"] == []


def test_asgi_v1_middleware_makes_no_hop_of_its_own(record, django_db_blocker, monkeypatch):
    """The naive path (V1_ADAPTER=django): Django's ASGI handler and the adapter middleware."""
    from apps.core.http.serving import django_adapter
    from backend.asgi import django_app as application

    seen = []
    real_handle = django_adapter.pipeline.handle

    async def spy_handle(ctx):
        seen.append((ctx.mode, threading.current_thread() is threading.main_thread()))
        return await real_handle(ctx)

    monkeypatch.setattr(django_adapter.pipeline, "handle", spy_handle)
    with django_db_blocker.unblock():  # Django's request signals may close old connections
        status, body = _asgi_get(application, "/v1/health/version", [])
    # The whole middleware chain must stay async: one sync-only middleware below the adapter
    # would turn it into a sync middleware run in a thread (seen once with WhiteNoise).
    assert seen == [("async", True)]
    assert status == 200 and b"version" in body
    assert record["sync_to_async"], "Django itself hops for its signals: the spy must see those"
    ours = [name for name in record["sync_to_async"] if name.startswith("apps.")]
    assert ours == [], f"the /v1 path hopped threads in our code: {ours}"


def test_wsgi_request_creates_no_loop_or_thread(record, django_db_blocker):
    from backend.wsgi import application

    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/v1/health/version", "QUERY_STRING": "", "SERVER_NAME": "testserver",
               "SERVER_PORT": "80", "wsgi.input": io.BytesIO(b""), "wsgi.url_scheme": "http", "wsgi.errors": io.StringIO(),
               "HTTP_HOST": "testserver", "REMOTE_ADDR": "127.0.0.1"}
    statuses = []
    with django_db_blocker.unblock():  # Django's request signals may close old connections
        for _ in range(20):
            body = b"".join(application(dict(environ, **{"wsgi.input": io.BytesIO(b"")}), lambda s, h: statuses.append(s)))
            assert b"1.9.6" in body
    assert statuses == ["200 OK"] * 20
    assert record["loops"] == [] and record["threads"] == [] and record["sync_to_async"] == []
