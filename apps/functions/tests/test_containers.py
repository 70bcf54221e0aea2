"""Functions end to end in real containers (Podman's Docker-compatible service), through the
official Python SDK: build from a tar.gz with dependencies from PyPI/npm, synchronous and
asynchronous executions, the runtime contract, limits, the dynamic key, event, scheduled and
cron triggers. Full lane (``containers``): the first run builds the runtime images (about a
minute); reruns reuse them (tags carry a hash of the recipe)."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
import requests
from appwrite.client import Client
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.services.functions import Functions

from apps.functions.tests.conftest import targz

pytestmark = [pytest.mark.full, pytest.mark.containers]

PY_MAIN = r'''
import json, os, time

def main(context):
    req = context.req
    if req.path == "/sleep":
        time.sleep(60)
    if req.path == "/crash":
        os._exit(3)
    if req.path == "/error":
        raise ValueError("boom")
    if req.path == "/memory":
        hog = bytearray(900 * 1024 * 1024)
        hog[::4096] = b"x" * len(hog[::4096])
    if req.path == "/redirect":
        return context.res.redirect("https://example.com/", 302)
    context.log("log line")
    context.error("error line")
    import six
    return context.res.json({
        "method": req.method, "path": req.path, "query": req.query, "body": req.body_text,
        "trigger": req.headers.get("x-appwrite-trigger"), "event": req.headers.get("x-appwrite-event"),
        "function": os.environ.get("APPWRITE_FUNCTION_ID"), "greeting": os.environ.get("GREETING"),
        "region": os.environ.get("REGION"), "key": os.environ.get("APPWRITE_FUNCTION_API_KEY"),
        "leaks": sorted(k for k in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL") if k in os.environ),
        "six": six.__version__,
    }, 201, {"x-custom": "yes"})
'''
NODE_MAIN = r'''
const ms = require('ms');
module.exports = async ({ req, res, log }) => {
  log('node log');
  return res.json({ method: req.method, body: req.bodyText, ms: ms('2 days'), fn: process.env.APPWRITE_FUNCTION_ID });
};
'''


@pytest.fixture(scope="module")
def engine():
    from apps.functions.tests.engine import start_engine

    found, reason = start_engine()
    if found is None:
        pytest.skip(f"no container engine: {reason}")
    yield found
    found.stop()


@pytest.fixture(scope="module")
def fn_env(engine, live_env) -> dict[str, str]:
    return {**live_env, "FUNCTIONS_EXECUTOR": "docker", "FUNCTIONS_DOCKER_HOST": engine.url,
            "FUNCTIONS_NETWORK": "appwrite-runtimes-test", "FUNCTIONS_WARM_SECONDS": "120",
            "TASKS_POLL_INTERVAL": "0.2", "TASKS_RETRY_DELAY": "1"}


@pytest.fixture(scope="module")
def fn_server(engine, fn_env):
    """An API server and a worker (queue ``functions``) with the engine configured."""
    from conftest import ARTIFACTS, start_server
    from tests.mail import start_worker

    env = fn_env
    server = start_server("asgi", env)
    ARTIFACTS.mkdir(exist_ok=True)
    worker = start_worker(env, ARTIFACTS / "worker-functions.log", "--queues", "functions")
    yield server
    worker.stop()
    server.stop()
    _remove_containers(engine)


def _remove_containers(engine) -> None:
    import docker

    client = docker.DockerClient(base_url=engine.url)
    for c in client.containers.list(all=True, filters={"label": "appwrite.functions"}):
        c.remove(force=True)
    client.close()


@pytest.fixture
def functions(fn_server, project) -> Functions:
    client = Client().set_endpoint(fn_server.endpoint).set_project(project.id).set_key(project.key)
    return Functions(client)


def _v(value) -> str:
    """An SDK enum member's value (the SDK's status and trigger fields are enums)."""
    return getattr(value, "value", value)


def _until(fetch, done, timeout: float = 300, what: str = "state"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fetch()
        if done(value):
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}: {value}")


def _deploy(functions, fid: str, files: dict) -> None:
    d = functions.create_deployment(fid, InputFile.from_bytes(targz(files), "code.tar.gz"), activate=True)
    built = _until(lambda: functions.get_deployment(fid, d.id), lambda x: _v(x.status) in ("ready", "failed"),
                   what="the build")
    assert _v(built.status) == "ready", built.buildlogs
    assert built.buildsize > 0 and built.buildlogs
    assert functions.get(fid).deploymentid == d.id


def test_python_function_end_to_end(functions, fn_server, project):
    api = requests.Session()
    head = {"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key}
    api.post(f"{fn_server.endpoint}/project/variables", headers=head,
             json={"variableId": "unique()", "key": "REGION", "value": "eu"}).raise_for_status()
    f = functions.create(ID.unique(), "py", "python-3.13", execute=["any"], scopes=["users.read"], timeout=5)
    functions.create_variable(f.id, ID.unique(), "GREETING", "hello", secret=True)
    _deploy(functions, f.id, {"main.py": PY_MAIN, "requirements.txt": "six==1.17.0\n"})

    # synchronous: the function's response comes back in the execution
    x = functions.create_execution(f.id, body="ping", path="/hi?a=1", method="PUT", headers={"x-test": "1"})
    assert _v(x.status) == "completed" and x.responsestatuscode == 201 and _v(x.trigger) == "http"
    out = json.loads(x.responsebody)
    assert out["method"] == "PUT" and out["path"] == "/hi" and out["query"] == {"a": "1"} and out["body"] == "ping"
    assert out["trigger"] == "http" and out["function"] == f.id and out["six"] == "1.17.0"
    assert out["greeting"] == "hello" and out["region"] == "eu"  # function and project variables
    assert out["leaks"] == []  # nothing of the server's environment
    assert {"name": "x-custom", "value": "yes"} in [h.model_dump(by_alias=True) for h in x.responseheaders]
    assert "log line" in x.logs and "error line" in x.errors and x.duration > 0

    # the dynamic key: scoped to the function's scopes, for this project only
    key = out["key"]
    assert key.startswith("dynamic_")
    dyn = {"X-Appwrite-Project": project.id, "X-Appwrite-Key": key}
    assert api.get(f"{fn_server.endpoint}/users", headers=dyn).status_code == 200
    denied = api.get(f"{fn_server.endpoint}/functions", headers=dyn)
    assert denied.status_code == 401 and denied.json()["type"] == "general_unauthorized_scope"

    # asynchronous: answered at once, polled until done; the body is not kept
    a = functions.create_execution(f.id, body="later", xasync=True)
    assert _v(a.status) in ("waiting", "processing")
    done = _until(lambda: functions.get_execution(f.id, a.id), lambda e: _v(e.status) in ("completed", "failed"),
                  timeout=60, what="the async execution")
    assert _v(done.status) == "completed" and done.responsestatuscode == 201 and done.responsebody == ""
    assert "log line" in done.logs
    listed = functions.list_executions(f.id)
    assert listed.total == 2

    # a redirect; then failures: each is recorded and the next execution still works
    r = functions.create_execution(f.id, path="/redirect")
    assert r.responsestatuscode == 302
    assert {"name": "location", "value": "https://example.com/"} in [h.model_dump(by_alias=True)
                                                                     for h in r.responseheaders]
    for path, reason in (("/error", "ValueError: boom"), ("/sleep", "timed out after 5 seconds"),
                         ("/crash", "exit code 3"), ("/memory", "memory limit")):
        bad = functions.create_execution(f.id, path=path)
        assert _v(bad.status) == "failed" and bad.responsestatuscode == 500, (path, bad.errors)
        assert reason in bad.errors, (path, bad.errors)
        ok = functions.create_execution(f.id, path="/")
        assert _v(ok.status) == "completed" and ok.responsestatuscode == 201, (path, ok.errors)


def test_node_function(functions):
    f = functions.create(ID.unique(), "node", "node-20.0", execute=["any"])
    package = json.dumps({"name": "fn", "version": "1.0.0", "dependencies": {"ms": "2.1.3"}})
    _deploy(functions, f.id, {"index.js": NODE_MAIN, "package.json": package})
    x = functions.create_execution(f.id, body="hey")
    assert _v(x.status) == "completed" and x.responsestatuscode == 200, x.errors
    assert json.loads(x.responsebody) == {"method": "POST", "body": "hey", "ms": 172800000, "fn": f.id}
    assert "node log" in x.logs


def test_broken_build(functions):
    f = functions.create(ID.unique(), "broken", "python-3.13")
    d = functions.create_deployment(f.id, InputFile.from_bytes(
        targz({"main.py": "def main(c):\n    return c.res.empty()\n",
               "requirements.txt": "this-package-does-not-exist-anywhere==0.0.1\n"}), "code.tar.gz"), activate=True)
    built = _until(lambda: functions.get_deployment(f.id, d.id), lambda x: _v(x.status) in ("ready", "failed"),
                   what="the build")
    assert _v(built.status) == "failed" and "exit code" in built.buildlogs
    from appwrite.exception import AppwriteException

    with pytest.raises(AppwriteException) as err:
        functions.create_execution(f.id)
    assert err.value.type == "deployment_not_found"


def test_event_scheduled_and_cron_triggers(functions, fn_server, project, sql):
    head = {"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key}
    base = fn_server.endpoint
    f = functions.create(ID.unique(), "events", "python-3.13", events=["databases.*.tables.*.rows.*.create"],
                         schedule="* * * * *")
    _deploy(functions, f.id, {"main.py": PY_MAIN, "requirements.txt": "six==1.17.0\n"})
    requests.post(f"{base}/tablesdb", headers=head, json={"databaseId": "evdb", "name": "ev"}).raise_for_status()
    requests.post(f"{base}/tablesdb/evdb/tables", headers=head,
                  json={"tableId": "evt", "name": "evt", "permissions": []}).raise_for_status()
    requests.post(f"{base}/tablesdb/evdb/tables/evt/columns/string", headers=head,
                  json={"key": "name", "size": 32, "required": False}).raise_for_status()
    _until(lambda: requests.get(f"{base}/tablesdb/evdb/tables/evt/columns/name", headers=head).json(),
           lambda c: c.get("status") == "available", timeout=60, what="the column")
    row = requests.post(f"{base}/tablesdb/evdb/tables/evt/rows", headers=head,
                        json={"rowId": "row1", "data": {"name": "x"}})
    assert row.status_code == 201, row.text
    event = _until(lambda: [e for e in functions.list_executions(f.id).executions if _v(e.trigger) == "event"],
                   lambda found: found and _v(found[0].status) in ("completed", "failed"), timeout=60,
                   what="the event execution")[0]
    assert _v(event.status) == "completed", event.errors

    at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=62)).isoformat()
    s = functions.create_execution(f.id, xasync=True, scheduled_at=at)
    assert _v(s.status) == "scheduled"
    # The scheduled execution and the function's next cron tick wait in the task queue until
    # their time (a minute away at least: Appwrite's rule). That the worker waits for a task's
    # run_after is django-tasks-db's part; here both are brought forward so the test need not
    # wait a minute: the tick's task still carries its planned time, which it checks.
    ((function_pk,),) = sql("SELECT id FROM functions_function WHERE uid = %s", (f.id,))
    ((execution_pk,),) = sql("SELECT id FROM functions_execution WHERE uid = %s", (s.id,))
    queued = sql("UPDATE django_tasks_database_dbtaskresult SET run_after = now() WHERE status = 'READY' "
                 "AND run_after > now() AND (task_path = 'apps.functions.tasks.run_schedule' "
                 "AND (args_kwargs -> 'kwargs' ->> 'function_id')::int = %s OR task_path = "
                 "'apps.functions.tasks.run_execution' AND (args_kwargs -> 'kwargs' ->> 'execution_id')::int = %s) "
                 "RETURNING task_path", (function_pk, execution_pk))
    assert sorted(p for (p,) in queued) == ["apps.functions.tasks.run_execution", "apps.functions.tasks.run_schedule"]
    runs = _until(lambda: functions.list_executions(f.id).executions,
                  lambda xs: any(x.id == s.id and _v(x.status) == "completed" for x in xs)
                  and any(_v(x.trigger) == "schedule" and _v(x.status) == "completed" for x in xs),
                  timeout=90, what="the scheduled and the cron executions")
    assert {_v(x.trigger) for x in runs} >= {"event", "http", "schedule"}


def test_sync_execution_on_wsgi(fn_server, fn_env, project):
    """The WSGI build runs a synchronous execution inline in its worker process."""
    from conftest import start_server

    wsgi = start_server("wsgi", fn_env)
    try:
        client = Client().set_endpoint(wsgi.endpoint).set_project(project.id).set_key(project.key)
        functions = Functions(client)
        f = functions.create(ID.unique(), "wsgi", "python-3.13", execute=["any"])
        _deploy(functions, f.id, {"main.py": "def main(context):\n    return context.res.text(context.req.body_text[::-1])\n"})
        x = functions.create_execution(f.id, body="abc")
        assert _v(x.status) == "completed" and x.responsebody == "cba", x.errors
    finally:
        wsgi.stop()
