"""Functions API on the live ASGI server without a container engine (the default lane): the
management routes work, executions answer 503 ``function_executor_unavailable``. Builds and
executions in real containers are in ``test_containers.py`` (full lane)."""

from __future__ import annotations

import pytest

from apps.functions.tests.conftest import make_function, new_id

CREATE_CASES = [
    # (name, body overrides, status, error type)
    ("defaults", {}, 201, None),
    ("all fields", {"execute": ["any"], "events": ["databases.*.tables.*.rows.*.create"], "schedule": "*/5 * * * *",
                    "timeout": 30, "enabled": False, "logging": False, "entrypoint": "src/main.py",
                    "commands": "pip install -r requirements.txt", "scopes": ["users.read"],
                    "specification": "s-0.5vcpu-512mb", "deploymentRetention": 36500}, 201, None),
    ("node runtime", {"runtime": "node-20.0"}, 201, None),
    ("unique id", {"functionId": "unique()"}, 201, None),
    ("unknown runtime", {"runtime": "cobol-1.0"}, 404, "function_runtime_unsupported"),
    ("missing runtime", {"runtime": None}, 400, "general_argument_invalid"),
    ("missing name", {"name": None}, 400, "general_argument_invalid"),
    ("bad id", {"functionId": "_bad"}, 400, "general_argument_invalid"),
    ("bad schedule", {"schedule": "every minute"}, 400, "general_argument_invalid"),
    ("schedule out of range", {"schedule": "61 * * * *"}, 400, "general_argument_invalid"),
    # well-formed, but no such day: finding the next run failed after the checks (500)
    ("schedule February 31st", {"schedule": "0 0 31 2 *"}, 400, "general_argument_invalid"),
    ("schedule February 30th", {"schedule": "0 0 30 2 *"}, 400, "general_argument_invalid"),
    ("timeout zero", {"timeout": 0}, 400, "general_argument_invalid"),
    ("timeout over the cap", {"timeout": 100000}, 400, "general_argument_invalid"),
    ("unknown scope", {"scopes": ["everything"]}, 400, "general_argument_invalid"),
    ("bad execute role", {"execute": ["nobody at all"]}, 400, "general_argument_invalid"),
    ("bad specification", {"specification": "s-64vcpu"}, 400, "general_argument_invalid"),
    ("events not a list", {"events": "users.*.create"}, 400, "general_argument_invalid"),
    *[(f"event {v!r}", {"events": [v]}, 400, "general_argument_invalid")
      for v in ("nothing.*", "users.*.create\n", "users..create", "users.a b", "", "users." + "x" * 40)],
    ("events of every service", {"events": ["users.*", "teams.*.memberships.*", "buckets.b.files.*.delete",
                                            "functions.*.executions.*.create"]}, 201, None),
    ("negative retention", {"deploymentRetention": -1}, 400, "general_argument_invalid"),
    ("retention over 100 years", {"deploymentRetention": 36501}, 400, "general_argument_invalid"),
    ("retention not a number", {"deploymentRetention": "week"}, 400, "general_argument_invalid"),
    # booleans follow Appwrite's validator (strict here): a real JSON boolean only
    *[(f"enabled {v!r}", {"enabled": v}, 400, "general_argument_invalid") for v in ("off", "yes", 2, "false", 0)],
    ("logging 'no'", {"logging": "no"}, 400, "general_argument_invalid"),
]


@pytest.mark.parametrize("name,overrides,status,etype", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_function_create(api, name, overrides, status, etype):
    body = {"functionId": new_id("f"), "name": "hello", "runtime": "python-3.13", **overrides}
    body = {k: v for k, v in body.items() if v is not None}
    r = api.call("POST", "/functions", json=body, key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        if body.get("functionId", "").startswith("f"):
            assert api.call("GET", f"/functions/{body['functionId']}", key=True).status_code == 404  # nothing written
        return
    f = r.json()
    assert f["name"] == "hello" and f["deploymentId"] == "" and f["vars"] == [] and f["live"] is True
    if name == "all fields":
        assert f["schedule"] == "*/5 * * * *" and f["timeout"] == 30 and f["enabled"] is False
        assert f["events"] == ["databases.*.tables.*.rows.*.create"] and f["scopes"] == ["users.read"]
        assert f["specification"] == "s-0.5vcpu-512mb" and f["entrypoint"] == "src/main.py"
        assert f["deploymentRetention"] == 36500
    else:
        assert f["deploymentRetention"] == 0


def test_function_crud(api):
    f = make_function(api, name="first")
    fid = f["$id"]
    again = api.call("POST", "/functions", json={"functionId": fid, "name": "x", "runtime": "python-3.13"}, key=True)
    assert again.status_code == 409 and again.json()["type"] == "function_already_exists"
    assert api.call("GET", f"/functions/{fid}", key=True).json()["name"] == "first"
    r = api.call("PUT", f"/functions/{fid}", json={"name": "renamed", "timeout": 5}, key=True)
    assert r.status_code == 200 and r.json()["name"] == "renamed" and r.json()["runtime"] == "python-3.13"
    never = api.call("PUT", f"/functions/{fid}", json={"name": "x", "schedule": "0 0 30 2 *"}, key=True)
    assert never.status_code == 400 and never.json()["type"] == "general_argument_invalid", never.text
    assert api.call("GET", f"/functions/{fid}", key=True).json()["name"] == "renamed"
    bad = api.call("PUT", f"/functions/{fid}", json={"name": "x", "runtime": "cobol-1.0"}, key=True)
    assert bad.status_code == 404 and bad.json()["type"] == "function_runtime_unsupported"
    kept = api.call("PUT", f"/functions/{fid}", json={"name": "renamed", "deploymentRetention": 30}, key=True)
    assert kept.status_code == 200 and kept.json()["deploymentRetention"] == 30
    too_long = api.call("PUT", f"/functions/{fid}", json={"name": "x", "deploymentRetention": 36501}, key=True)
    assert too_long.status_code == 400 and too_long.json()["type"] == "general_argument_invalid"
    listed = api.call("GET", "/functions", params={"search": "renam"}, key=True).json()
    assert [x["$id"] for x in listed["functions"]] == [fid] and listed["total"] == 1
    q = api.call("GET", "/functions", params={"queries[]": ['{"method":"equal","attribute":"name","values":["nope"]}']},
                 key=True).json()
    assert q["total"] == 0
    bad_query = api.call("GET", "/functions", params={"queries[]": ['{"method":"equal","attribute":"color",'
                                                                   '"values":["x"]}']}, key=True)
    assert bad_query.status_code == 400 and bad_query.json()["type"] == "general_query_invalid"
    assert api.call("DELETE", f"/functions/{fid}", key=True).status_code == 204
    for method in ("GET", "DELETE"):
        r = api.call(method, f"/functions/{fid}", key=True)
        assert r.status_code == 404 and r.json()["type"] == "function_not_found"


def test_runtimes_and_specifications(api):
    runtimes = api.call("GET", "/functions/runtimes", key=True).json()
    keys = {r["$id"] for r in runtimes["runtimes"]}
    assert keys == {"python-3.13", "node-20.0"} and runtimes["total"] == 2
    specs = api.call("GET", "/functions/specifications", key=True).json()
    assert {"s-1vcpu-512mb", "s-0.5vcpu-512mb"} <= {s["slug"] for s in specs["specifications"]}


def test_scopes(api, django_db_blocker):
    from conftest import Api, make_project

    limited = Api(api.server, make_project(django_db_blocker, scopes=["users.read"]))
    r = limited.call("GET", "/functions", key=True)
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"
    r = api.call("GET", "/functions")  # a guest
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"


VARIABLE_CASES = [
    ("plain", {"key": "GREETING", "value": "hi"}, 201, None),
    ("secret", {"key": "TOKEN", "value": "s3cr3t", "secret": True}, 201, None),
    ("bad key", {"key": "has space", "value": "x"}, 400, "general_argument_invalid"),
    ("missing value", {"key": "A"}, 400, "general_argument_invalid"),
    ("value too long", {"key": "A", "value": "x" * 8193}, 400, "general_argument_invalid"),
    ("bad id", {"variableId": "_x", "key": "A", "value": "x"}, 400, "general_argument_invalid"),
    ("secret 'yes'", {"key": "A", "value": "x", "secret": "yes"}, 400, "general_argument_invalid"),
    ("secret 'true' (strict)", {"key": "A", "value": "x", "secret": "true"}, 400, "general_argument_invalid"),
]


@pytest.mark.parametrize("name,body,status,etype", VARIABLE_CASES, ids=[c[0] for c in VARIABLE_CASES])
def test_variable_create(api, name, body, status, etype):
    f = make_function(api)
    r = api.call("POST", f"/functions/{f['$id']}/variables", json={"variableId": "unique()", **body}, key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        assert api.call("GET", f"/functions/{f['$id']}/variables", key=True).json()["total"] == 0
        return
    v = r.json()
    assert v["resourceType"] == "function" and v["resourceId"] == f["$id"]
    assert v["value"] == ("" if body.get("secret") else body["value"])  # secrets are write-only


def test_variables_lifecycle(api):
    f = make_function(api)
    base = f"/functions/{f['$id']}/variables"
    v = api.call("POST", base, json={"variableId": "unique()", "key": "K", "value": "1", "secret": True}, key=True).json()
    dup = api.call("POST", base, json={"variableId": "unique()", "key": "K", "value": "2"}, key=True)
    assert dup.status_code == 409 and dup.json()["type"] == "variable_already_exists"
    unsecret = api.call("PUT", f"{base}/{v['$id']}", json={"secret": False}, key=True)
    assert unsecret.status_code == 400 and unsecret.json()["type"] == "general_argument_invalid"
    r = api.call("PUT", f"{base}/{v['$id']}", json={"value": "3", "description": "d"}, key=True)
    assert r.status_code == 200 and r.json()["value"] == "" and r.json()["description"] == "d"
    got = api.call("GET", f"/functions/{f['$id']}", key=True).json()
    assert [x["key"] for x in got["vars"]] == ["K"] and got["vars"][0]["value"] == ""
    assert api.call("GET", base, key=True).json()["total"] == 1
    assert api.call("DELETE", f"{base}/{v['$id']}", key=True).status_code == 204
    gone = api.call("GET", f"{base}/{v['$id']}", key=True)
    assert gone.status_code == 404 and gone.json()["type"] == "variable_not_found"
    missing_fn = api.call("GET", "/functions/nope/variables", key=True)
    assert missing_fn.status_code == 404 and missing_fn.json()["type"] == "function_not_found"


def test_project_variables(api):
    r = api.call("POST", "/project/variables", json={"variableId": "unique()", "key": "REGION", "value": "eu", "secret": False},
                 key=True)
    assert r.status_code == 201 and r.json()["resourceType"] == "project" and r.json()["resourceId"] == ""
    vid = r.json()["$id"]
    assert [v["key"] for v in api.call("GET", "/project/variables", key=True).json()["variables"]] == ["REGION"]
    f = make_function(api)  # a function's own list does not show project variables
    assert api.call("GET", f"/functions/{f['$id']}/variables", key=True).json()["total"] == 0
    assert api.call("PUT", f"/project/variables/{vid}", json={"value": "us"}, key=True).json()["value"] == "us"
    assert api.call("DELETE", f"/project/variables/{vid}", key=True).status_code == 204
