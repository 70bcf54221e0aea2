"""PostgreSQL going away costs no 500: restarts under load, restarts while idle, an outage.

Each test runs a live server (ASGI and WSGI) against a throwaway PostgreSQL cluster of its own
(``pg_cluster``), never the shared one, and restarts or stops that cluster.
"""

from __future__ import annotations

import threading
import time

import pytest
import requests

from apps.core.tests.pg_cluster import Cluster
from conftest import Api, ProjectInfo, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def cluster(live_env):
    c = Cluster(live_env)
    yield c
    c.remove()


@pytest.fixture(params=["asgi", "wsgi"])
def kind(request) -> str:
    return request.param


def _serve(cluster: Cluster, kind: str, **env):
    return start_server(kind, {**cluster.env, "DB_POOL_MIN_SIZE": "8", **env})


def _table(api: Api) -> str:
    """A fresh database and table on ``api``; the table's rows path."""
    from apps.databases.tests.conftest import Tdb

    t = Tdb(api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
    for i in range(3):
        assert t.add({"title": f"r{i}"}).status_code == 201
    return t.R


def _check_error(r: requests.Response) -> None:
    """A failure must be Appwrite's JSON 503 with Retry-After."""
    assert r.status_code == 503, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.text[:300]
    assert r.json()["type"] == "general_service_unavailable", r.text
    assert int(r.headers["Retry-After"]) >= 1


def test_restart_while_idle_costs_nothing(cluster, kind):
    """Every idle pooled connection is dead after the restart: each is found dead before use
    (no round trip per checkout) and replaced; no request fails."""
    server = _serve(cluster, kind)
    try:
        api = Api(server, ProjectInfo("p", cluster.key, 0))
        rows = _table(api)

        def burst(n):
            out = []
            threads = [threading.Thread(target=lambda i=i: out.append(
                api.call("GET", rows, key=True) if i % 2 else
                api.call("POST", rows, json={"rowId": "unique()", "data": {"title": "x"}}, key=True)))
                for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return out

        assert all(r.status_code < 300 for r in burst(16))  # the pools hold several connections now
        cluster.restart()
        time.sleep(3)
        answers = burst(40)
        bad = [(r.status_code, r.text[:200]) for r in answers if r.status_code >= 300]
        assert not bad, bad
    finally:
        server.stop()
        cluster.ensure_up()


def test_restart_under_load_answers_503_not_500(cluster, kind):
    """Requests in flight while PostgreSQL restarts: the ones that lose their connection answer
    JSON 503 with Retry-After (reads retried once on a new connection first); none is a 500."""
    server = _serve(cluster, kind)
    try:
        api = Api(server, ProjectInfo("p", cluster.key, 0))
        rows = _table(api)
        stop = threading.Event()
        answers: list[requests.Response] = []

        def client(i):
            mine = Api(server, api.project)
            while not stop.is_set():
                if i % 2:
                    answers.append(mine.call("GET", rows, key=True, params={"queries[0]": '{"method":"limit","values":[5]}'}))
                else:
                    answers.append(mine.call("POST", rows, json={"rowId": "unique()", "data": {"title": "y"}}, key=True))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        cluster.restart()
        time.sleep(4)
        stop.set()
        for t in threads:
            t.join()
        failed = [r for r in answers if r.status_code >= 300]
        for r in failed:
            _check_error(r)
        assert len(answers) - len(failed) > 20
        assert api.call("GET", rows, key=True).status_code == 200
    finally:
        server.stop()
        cluster.ensure_up()


def test_database_down_answers_json_503_within_seconds(cluster, kind):
    """No connection can be had: a JSON 503 within DB_CONNECT_TIMEOUT (a few seconds), not a
    30-second pool wait that the WSGI worker timeout turns into an HTML 500."""
    server = _serve(cluster, kind, DB_POOL_MIN_SIZE="1")
    try:
        api = Api(server, ProjectInfo("p", cluster.key, 0))
        rows = _table(api)
        cluster.stop()
        for method in ("GET", "POST", "GET"):
            started = time.monotonic()
            r = api.call(method, rows, key=True, json=None if method == "GET" else
                         {"rowId": "unique()", "data": {"title": "z"}}, timeout=60)
            elapsed = time.monotonic() - started
            _check_error(r)
            assert elapsed < 8, elapsed
        cluster.start()
        cluster.wait_ready()
        deadline = time.monotonic() + 15
        while api.call("GET", rows, key=True).status_code != 200:
            assert time.monotonic() < deadline, "no recovery after PostgreSQL came back"
            time.sleep(0.5)
    finally:
        server.stop()
        cluster.ensure_up()


def test_a_read_whose_connection_is_killed_is_run_again(kind, live_env, project):
    """A GET whose backend is terminated mid-statement is run once more on a new connection
    (200); a POST in the same spot answers 503 with Retry-After (it is not repeated)."""
    import psycopg

    from apps.databases.tests.conftest import Tdb

    server = start_server(kind, live_env)
    lock = psycopg.connect(live_env["DATABASE_URL"], autocommit=True)
    killer = psycopg.connect(live_env["DATABASE_URL"], autocommit=True)  # outside the lock's transaction
    try:
        api = Api(server, project)
        t = Tdb(api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
        for method, body, expected in (("GET", None, 200), ("POST", {"rowId": "unique()", "data": {"title": "a"}}, 503)):
            lock.execute("BEGIN")
            lock.execute("LOCK TABLE databases_row IN ACCESS EXCLUSIVE MODE")
            out: list = []
            thread = threading.Thread(target=lambda m=method, b=body, o=out: o.append(api.call(m, t.R, json=b, key=True)))
            thread.start()
            deadline = time.monotonic() + 10
            killed = 0
            while not killed:
                assert time.monotonic() < deadline, "the request never reached PostgreSQL"
                killed = killer.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND pid <> pg_backend_pid() AND datname = current_database() AND query LIKE %s",
                    ("%databases_row%",)).fetchone()[0]
                time.sleep(0.05)
            time.sleep(0.3)  # the GET's second run is now waiting on the lock again
            lock.execute("ROLLBACK")
            thread.join(30)
            r = out[0]
            assert r.status_code == expected, r.text
            if expected == 503:
                _check_error(r)
    finally:
        lock.close()
        killer.close()
        server.stop()
