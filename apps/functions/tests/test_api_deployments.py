"""Table-driven API cases for deployments (upload, activation, template deployments) and executions
(without a container engine), with the bad-input rows of each route. Like ``test_api.py``: the live ASGI server, no engine."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from apps.functions.tests.conftest import make_function, targz, upload_code

DEPLOYMENT_CASES = [
    # (name, file name, bytes or None for a valid archive, status, error type)
    ("valid", "code.tar.gz", None, 202, None),
    ("not gzip", "code.tar.gz", b"this is not an archive", 403, "storage_invalid_file"),
    ("gzip but not tar", "code.tar.gz", None, 403, "storage_invalid_file"),
    ("path escape", "code.tar.gz", None, 403, "storage_invalid_file"),
    ("wrong extension", "code.zip", b"PK\x03\x04", 400, "storage_file_type_unsupported"),
    ("empty", "code.tar.gz", b"", 400, "storage_file_empty"),
]


def _archive(name: str) -> bytes:
    if name == "gzip but not tar":
        import gzip
        return gzip.compress(b"plain text, no tar headers" * 40)
    if name == "path escape":
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo("../evil.py")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
        return buf.getvalue()
    return targz({"main.py": "def main(context):\n    return context.res.text('hi')\n"})


@pytest.mark.parametrize("name,filename,data,status,etype", DEPLOYMENT_CASES, ids=[c[0] for c in DEPLOYMENT_CASES])
def test_deployment_create(api, name, filename, data, status, etype):
    f = make_function(api)
    r = upload_code(api, f["$id"], _archive(name) if data is None else data, filename=filename)
    assert r.status_code == status, r.text
    listed = api.call("GET", f"/functions/{f['$id']}/deployments", key=True).json()
    if etype:
        assert r.json()["type"] == etype
        assert listed["total"] == 0  # nothing left behind
        return
    d = r.json()
    assert d["status"] == "waiting" and d["resourceId"] == f["$id"] and d["entrypoint"] == "main.py"
    assert d["sourceSize"] > 0 and listed["total"] == 1


@pytest.mark.parametrize("value,status", [("true", 202), ("false", 202), ("1", 202), ("0", 202), ("yes", 400),
                                          ("off", 400), ("2", 400), ("True", 400), ("", 400)])
def test_deployment_activate_takes_appwrites_loose_booleans(api, value, status):
    """``activate`` is a multipart field (a string): Appwrite's loose rule, nothing more."""
    f = make_function(api)
    r = api.call("POST", f"/functions/{f['$id']}/deployments", data={"activate": value},
                 files={"code": ("code.tar.gz", io.BytesIO(_archive("valid")))}, key=True)
    assert r.status_code == status, r.text
    listed = api.call("GET", f"/functions/{f['$id']}/deployments", key=True).json()
    if status == 400:
        assert r.json()["type"] == "general_argument_invalid" and "`activate`" in r.json()["message"]
        assert listed["total"] == 0  # nothing written
    else:
        assert listed["total"] == 1


@pytest.mark.parametrize("value,status", [("false", 200), ("0", 200), ("true", 200), ("off", 400), ("yes", 400),
                                          ("2", 400)])
def test_list_total_takes_appwrites_loose_booleans(api, value, status):
    f = make_function(api)
    for path in ("/functions", f"/functions/{f['$id']}/deployments", f"/functions/{f['$id']}/executions",
                 f"/functions/{f['$id']}/variables"):
        r = api.call("GET", path, params={"total": value}, key=True)
        assert r.status_code == status, (path, r.text)
        if status == 400:
            assert r.json()["type"] == "general_argument_invalid"
    if status == 200:
        assert (api.call("GET", "/functions", params={"total": value}, key=True).json()["total"] > 0) is (value == "true")


def test_deployment_routes(api):
    f = make_function(api)
    fid = f["$id"]
    data = targz({"main.py": "def main(context):\n    return context.res.text('hi')\n"})
    d = upload_code(api, fid, data).json()
    base = f"/functions/{fid}/deployments/{d['$id']}"
    assert api.call("GET", base, key=True).json()["$id"] == d["$id"]
    download = api.call("GET", base + "/download", key=True)
    assert download.status_code == 200 and download.content == data
    output = api.call("GET", base + "/download", params={"type": "output"}, key=True)
    assert output.status_code == 400 and output.json()["type"] == "build_not_ready"
    not_ready = api.call("PATCH", f"/functions/{fid}/deployment", json={"deploymentId": d["$id"]}, key=True)
    assert not_ready.status_code == 400 and not_ready.json()["type"] == "build_not_ready"
    canceled = api.call("PATCH", base + "/status", key=True)
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    twice = api.call("PATCH", base + "/status", key=True)
    assert twice.status_code == 400 and twice.json()["type"] == "build_already_completed"
    dup = api.call("POST", f"/functions/{fid}/deployments/duplicate", json={"deploymentId": d["$id"]}, key=True)
    assert dup.status_code == 202 and dup.json()["$id"] != d["$id"]
    vcs = api.call("POST", f"/functions/{fid}/deployments/vcs", json={"type": "branch", "reference": "main"}, key=True)
    assert vcs.status_code == 400 and vcs.json()["type"] == "general_argument_invalid"
    assert api.call("DELETE", base, key=True).status_code == 204
    for method, path in (("GET", base), ("DELETE", base), ("GET", base + "/download")):
        r = api.call(method, path, key=True)
        assert r.status_code == 404 and r.json()["type"] == "deployment_not_found"


def test_chunked_deployment(api):
    """Two chunks through the storage upload protocol (Content-Range, x-appwrite-id)."""
    from apps.functions.tests.conftest import CHUNK

    f = make_function(api)
    data = targz({"main.py": "def main(context):\n    return context.res.empty()\n",
                  "blob.bin": os.urandom(CHUNK + 1000)})
    assert len(data) > CHUNK
    first = api.call("POST", f"/functions/{f['$id']}/deployments", data={"activate": "true"},
                     files={"code": ("code.tar.gz", io.BytesIO(data[:CHUNK]))},
                     headers={"Content-Range": f"bytes 0-{CHUNK - 1}/{len(data)}"}, key=True)
    assert first.status_code == 202, first.text
    assert first.json()["chunksUploaded"] == 1 and first.json()["chunksTotal"] == 2
    second = api.call("POST", f"/functions/{f['$id']}/deployments", data={"activate": "true"},
                      files={"code": ("code.tar.gz", io.BytesIO(data[CHUNK:]))},
                      headers={"Content-Range": f"bytes {CHUNK}-{len(data) - 1}/{len(data)}",
                               "x-appwrite-id": first.json()["$id"]}, key=True)
    assert second.status_code == 202, second.text
    assert second.json()["$id"] == first.json()["$id"] and second.json()["sourceSize"] == len(data)
    download = api.call("GET", f"/functions/{f['$id']}/deployments/{first.json()['$id']}/download", key=True)
    assert download.content == data
    bad_range = api.call("POST", f"/functions/{f['$id']}/deployments",
                         files={"code": ("code.tar.gz", io.BytesIO(b"x" * 10))},
                         headers={"Content-Range": "bytes 5-14/100"}, key=True)
    assert bad_range.status_code == 400 and bad_range.json()["type"] == "storage_invalid_content_range"


def test_deployment_retention(api, sql, live_env, mail_worker):
    """A worker's periodic job (any worker: here the session's mail worker) deletes the
    deployments older than the function's ``deploymentRetention`` days that are not its active
    one, with their code; 0 keeps everything."""
    from tests.mail import wait_until

    code = targz({"main.py": "def main(context):\n    return context.res.empty()\n"})
    kept_all = make_function(api)["$id"]
    fid = make_function(api, deploymentRetention=2)["$id"]
    active, old, recent = (upload_code(api, fid, code).json()["$id"] for _ in range(3))
    forever = upload_code(api, kept_all, code).json()["$id"]
    sql("UPDATE functions_deployment SET status = 'ready' WHERE uid = %s", (active,))  # as if built
    r = api.call("PATCH", f"/functions/{fid}/deployment", json={"deploymentId": active}, key=True)
    assert r.status_code == 200 and r.json()["deploymentId"] == active
    rows = dict(sql("SELECT uid, id FROM functions_deployment WHERE uid IN (%s, %s)", (active, old)))
    sql("UPDATE functions_deployment SET created_at = now() - interval '3 days' WHERE uid IN (%s, %s, %s)",
        (active, old, forever))
    folder = os.path.join(live_env["STORAGE_ROOT"], ".functions", str(rows[old]))
    assert os.path.exists(folder)

    def gone() -> bool:
        return api.call("GET", f"/functions/{fid}/deployments/{old}", key=True).status_code == 404

    wait_until(gone, timeout=30, what="the expired deployment's deletion", every=0.5)
    wait_until(lambda: not os.path.exists(folder), timeout=10, what="its code's removal", every=0.1)
    assert os.path.exists(os.path.join(live_env["STORAGE_ROOT"], ".functions", str(rows[active])))
    for dep_fid, uid in ((fid, active), (fid, recent), (kept_all, forever)):
        assert api.call("GET", f"/functions/{dep_fid}/deployments/{uid}", key=True).status_code == 200, uid
    assert api.call("GET", f"/functions/{fid}", key=True).json()["deploymentId"] == active


EXECUTION_CASES = [
    # (name, body, caller, status, error type)
    ("no engine", {}, "key", 503, "function_executor_unavailable"),
    ("body over the limit", {"body": "x" * (10 * 1024 * 1024 + 1)}, "key", 413, "general_payload_too_large"),
    ("bad method", {"method": "TRACE"}, "key", 400, "general_argument_invalid"),
    ("bad path", {"path": "no-slash"}, "key", 400, "general_argument_invalid"),
    ("bad headers", {"headers": {"x-a": {"nested": 1}}}, "key", 503, "function_executor_unavailable"),
    ("guest without execute", {}, "guest", 401, "user_unauthorized"),
    ("unknown function", {"functionId": "nope"}, "key", 404, "function_not_found"),
    ("async 'yes'", {"async": "yes"}, "key", 400, "general_argument_invalid"),
    ("async 2", {"async": 2}, "key", 400, "general_argument_invalid"),
    ("async 'true' (loose in Appwrite)", {"async": "true"}, "key", 503, "function_executor_unavailable"),
]


@pytest.mark.parametrize("name,body,caller,status,etype", EXECUTION_CASES, ids=[c[0] for c in EXECUTION_CASES])
def test_execution_create_without_engine(api, name, body, caller, status, etype):
    f = make_function(api)
    fid = body.pop("functionId", f["$id"])
    r = api.call("POST", f"/functions/{fid}/executions", json=body, key=caller == "key")
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    if status == 503:
        assert "FUNCTIONS_EXECUTOR" in r.json()["message"]  # says what to set up


def test_executions_read_routes(api):
    f = make_function(api)
    listed = api.call("GET", f"/functions/{f['$id']}/executions", key=True)
    assert listed.status_code == 200 and listed.json() == {"total": 0, "executions": []}
    r = api.call("GET", f"/functions/{f['$id']}/executions/nope", key=True)
    assert r.status_code == 404 and r.json()["type"] == "execution_not_found"
    r = api.call("DELETE", f"/functions/{f['$id']}/executions/nope", key=True)
    assert r.status_code == 404 and r.json()["type"] == "execution_not_found"


def test_execute_permission_and_execution_reads(api):
    """A user holding a role of ``execute`` passes the permission check (then meets the 503);
    a user without one gets 401; a user lists only their own executions (none here)."""
    _, session = api.signup()
    allowed = make_function(api, execute=["users"])
    r = api.call("POST", f"/functions/{allowed['$id']}/executions", json={}, session=session)
    assert r.status_code == 503 and r.json()["type"] == "function_executor_unavailable"
    denied = make_function(api, execute=["team:nobody"])
    r = api.call("POST", f"/functions/{denied['$id']}/executions", json={}, session=session)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    disabled = make_function(api, execute=["any"], enabled=False)
    r = api.call("POST", f"/functions/{disabled['$id']}/executions", json={}, session=session)
    assert r.status_code == 404 and r.json()["type"] == "function_not_found"
    listed = api.call("GET", f"/functions/{allowed['$id']}/executions", session=session)
    assert listed.status_code == 200 and listed.json()["total"] == 0
    r = api.call("DELETE", f"/functions/{allowed['$id']}/executions/any", session=session)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    r = api.call("POST", f"/functions/{allowed['$id']}/executions", json={"async": True,
                 "scheduledAt": "2000-01-01T00:00:00Z"}, key=True)
    assert r.status_code == 503  # the engine is checked first; the date rule is in test_units


TEMPLATE = {"repository": "templates", "owner": "appwrite", "rootDirectory": "python/starter", "type": "branch",
            "reference": "main"}
TEMPLATE_CASES = [
    # (name, body overrides, status, error type); the download itself is test_templates.py's
    ("missing repository", {"repository": None}, 400, "general_argument_invalid"),
    ("missing owner", {"owner": None}, 400, "general_argument_invalid"),
    ("missing rootDirectory", {"rootDirectory": None}, 400, "general_argument_invalid"),
    ("missing type", {"type": None}, 400, "general_argument_invalid"),
    ("missing reference", {"reference": None}, 400, "general_argument_invalid"),
    ("unknown type", {"type": "release"}, 400, "general_argument_invalid"),
    ("empty repository", {"repository": ""}, 400, "general_argument_invalid"),
    ("repository with a slash", {"repository": "a/b"}, 400, "general_argument_invalid"),
    ("owner going up", {"owner": ".."}, 400, "general_argument_invalid"),
    ("repository too long", {"repository": "r" * 129}, 400, "general_argument_invalid"),
    ("reference going up", {"reference": "main/../../x"}, 400, "general_argument_invalid"),
    ("reference with a space", {"reference": "my branch"}, 400, "general_argument_invalid"),
    ("rootDirectory going up", {"rootDirectory": "../secrets"}, 400, "general_argument_invalid"),
    ("rootDirectory too long", {"rootDirectory": "d" * 129}, 400, "general_argument_invalid"),
    ("activate not a boolean", {"activate": "maybe"}, 400, "general_argument_invalid"),
    ("activate 'off'", {"activate": "off"}, 400, "general_argument_invalid"),
    ("activate 'true' (strict in JSON)", {"activate": "true"}, 400, "general_argument_invalid"),
    ("unknown function", {"functionId": "nope"}, 404, "function_not_found"),
]


@pytest.mark.parametrize("name,overrides,status,etype", TEMPLATE_CASES, ids=[c[0] for c in TEMPLATE_CASES])
def test_template_deployment_bad_input(api, name, overrides, status, etype):
    fid = make_function(api)["$id"]
    body = {k: v for k, v in {**TEMPLATE, **overrides}.items() if v is not None}
    r = api.call("POST", f"/functions/{body.pop('functionId', fid)}/deployments/template", json=body, key=True)
    assert r.status_code == status and r.json()["type"] == etype, r.text
    assert api.call("GET", f"/functions/{fid}/deployments", key=True).json()["total"] == 0  # nothing created
