"""A synchronous execution whose API process is killed (``kill -9``) mid-run never stays
``processing``: the next API process of the host fails it at its start, a worker at its start or
heartbeat, and any execution left ``processing`` past its function's timeout plus
``FUNCTIONS_EXECUTION_GRACE`` is failed by the worker whichever host ran it
(``apps.functions.maintenance``). Real servers, a real worker, real containers (podman)."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from apps.functions.maintenance import OVERDUE, STOPPED
from apps.functions.tests.conftest import make_function, targz, upload_code
from conftest import ARTIFACTS, Api, start_server
from tests.mail import start_worker, wait_until

pytestmark = [pytest.mark.full, pytest.mark.faults, pytest.mark.containers]

SLEEPY = "import time\n\ndef main(context):\n    time.sleep(25)\n    return context.res.text('late')\n"


@pytest.fixture(scope="module")
def engine():
    from apps.functions.tests.engine import start_engine

    found, reason = start_engine()
    if found is None:
        pytest.skip(f"no container engine: {reason}")
    yield found
    import docker

    client = docker.DockerClient(base_url=found.url)
    for c in client.containers.list(all=True, filters={"label": "appwrite.functions"}):
        c.remove(force=True)
    client.close()
    found.stop()


@pytest.fixture(scope="module")
def env(engine, live_env) -> dict[str, str]:
    return {**live_env, "FUNCTIONS_EXECUTOR": "docker", "FUNCTIONS_DOCKER_HOST": engine.url,
            "FUNCTIONS_NETWORK": "appwrite-runtimes-test", "FUNCTIONS_EXECUTION_GRACE": "1",
            "TASKS_POLL_INTERVAL": "0.2", "TASKS_HEARTBEAT": "0.5", "TASKS_WORKER_TIMEOUT": "3"}


def _status(sql, function_uid: str) -> list[tuple]:
    return sql("SELECT e.uid, e.status, e.runner, e.response_status_code, e.errors FROM functions_execution e "
               "JOIN functions_function f ON f.id = e.function_id WHERE f.uid = %s ORDER BY e.id", (function_uid,))


def _killed_mid_execution(server, api: Api, sql, fid: str) -> str:
    """Start a synchronous execution on ``server``, ``kill -9`` it once the execution runs; its ID."""
    before = len(_status(sql, fid))
    threading.Thread(target=lambda: _quietly(api, fid), daemon=True).start()
    row = wait_until(lambda: next((r for r in _status(sql, fid)[before:] if r[2]), None), timeout=120,
                     what="the execution to start")
    assert row[1] == "processing" and row[2].endswith(f":{server.proc.pid}")
    time.sleep(1)  # well inside the function's 25 s
    server.proc.kill()
    server.proc.wait()
    assert _status(sql, fid)[before][1] == "processing"
    return row[0]


def _quietly(api: Api, fid: str) -> None:
    try:
        api.call("POST", f"/functions/{fid}/executions", json={"body": "x"}, key=True, timeout=60)
    except requests.RequestException:
        pass  # the server was killed under the request


def test_killed_api_process_fails_its_execution(engine, env, project, sql):

    server = start_server("asgi", env)
    worker = start_worker(env, ARTIFACTS / "worker-functions-crash.log", "--queues", "functions")
    try:
        api = Api(server, project)
        fid = make_function(api, timeout=30, execute=["any"])["$id"]
        assert upload_code(api, fid, targz({"main.py": SLEEPY})).status_code == 202
        wait_until(lambda: api.call("GET", f"/functions/{fid}", key=True).json()["deploymentId"], timeout=300,
                   what="the build", every=0.5)
        worker.stop()  # from here on only an API process's start may fail the execution

        # 1. The API process dies mid-run: the next one of this host fails the execution at its start.
        first = _killed_mid_execution(server, api, sql, fid)
        server = start_server("asgi", env)
        api = Api(server, project)
        x = wait_until(lambda: (lambda e: e if e["status"] != "processing" else None)(
            api.call("GET", f"/functions/{fid}/executions/{first}", key=True).json()), timeout=15,
            what="the execution to fail")
        assert x["status"] == "failed" and x["responseStatusCode"] == 500 and x["errors"] == STOPPED

        # 2. Again, and no API process starts: a worker fails it (at its start or heartbeat).
        second = _killed_mid_execution(server, api, sql, fid)
        worker = start_worker(env, ARTIFACTS / "worker-functions-crash.log", "--queues", "functions")
        wait_until(lambda: [r for r in _status(sql, fid) if r[0] == second and r[1] == "failed"], timeout=15,
                   what="the worker to fail the execution")
        row = next(r for r in _status(sql, fid) if r[0] == second)
        assert row[3] == 500 and row[4] == STOPPED

        # 3. A runner this host cannot check (another host): failed once past timeout + grace only.
        sql("UPDATE functions_execution SET status = 'processing', runner = 'elsewhere:1', "
            "updated_at = now() - interval '1 hour' WHERE uid = %s", (first,))
        sql("UPDATE functions_execution SET status = 'processing', runner = 'elsewhere:1', "
            "updated_at = now() WHERE uid = %s", (second,))
        wait_until(lambda: [r for r in _status(sql, fid) if r[0] == first and r[1] == "failed"], timeout=15,
                   what="the worker to fail the overdue execution")
        assert next(r for r in _status(sql, fid) if r[0] == first)[4] == OVERDUE.format(grace=1)
        time.sleep(2)  # several heartbeats: the recent one is within its 30 s timeout
        assert next(r for r in _status(sql, fid) if r[0] == second)[1] == "processing"
    finally:
        worker.stop()
        server.stop()
