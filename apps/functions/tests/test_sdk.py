"""Conformance of the Functions service with the unmodified Python SDK (appwrite==27.0.0),
without a container engine (default lane): management routes, the chunked code upload the SDK
does for archives over 5 MB, and the 503 of executions."""

from __future__ import annotations

import os

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.query import Query
from appwrite.services.functions import Functions

from apps.functions.tests.conftest import CHUNK, targz


@pytest.fixture(params=["asgi", "wsgi"])
def functions(request, project) -> Functions:
    """The SDK on the ASGI and on the WSGI (gunicorn) build."""
    server = request.getfixturevalue(f"{request.param}_server")
    client = Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key)
    return Functions(client)


def test_sdk_functions(functions):
    f = functions.create(ID.unique(), "sdk", "python-3.13", execute=["users"], events=["users.*.create"],
                         schedule="0 * * * *", timeout=10, scopes=["users.read"], deployment_retention=7)
    assert f.name == "sdk" and f.runtime == "python-3.13" and f.execute == ["users"] and f.timeout == 10
    assert f.deploymentretention == 7
    assert functions.get(f.id).schedule == "0 * * * *"
    assert functions.list(queries=[Query.equal("name", ["sdk"])]).total == 1
    assert {r.id for r in functions.list_runtimes().runtimes} == {"python-3.13", "node-20.0"}
    assert functions.list_specifications().total >= 1
    updated = functions.update(f.id, "renamed", enabled=False)
    assert updated.name == "renamed" and updated.enabled is False and updated.runtime == "python-3.13"

    v = functions.create_variable(f.id, ID.unique(), "API_TOKEN", "abc", secret=True)
    assert v.secret is True and v.value == ""
    assert functions.list_variables(f.id).total == 1
    assert functions.update_variable(f.id, v.id, "API_TOKEN", value="def").value == ""
    assert functions.get_variable(f.id, v.id).key == "API_TOKEN"
    functions.delete_variable(f.id, v.id)

    small = targz({"main.py": "def main(context):\n    return context.res.text('hi')\n"})
    d = functions.create_deployment(f.id, InputFile.from_bytes(small, "code.tar.gz"), activate=True)
    assert d.resourceid == f.id and d.sourcesize == len(small)
    big = targz({"main.py": "def main(context):\n    return context.res.empty()\n", "blob": os.urandom(CHUNK + 5)})
    chunked = functions.create_deployment(f.id, InputFile.from_bytes(big, "big.tar.gz"), activate=False)
    assert chunked.sourcesize == len(big)  # two chunks, one deployment
    assert functions.list_deployments(f.id).total == 2
    assert functions.get_deployment_download(f.id, d.id) == small
    assert functions.get_deployment(f.id, chunked.id).entrypoint == "main.py"
    assert functions.update_deployment_status(f.id, d.id).status.value == "canceled"
    functions.delete_deployment(f.id, chunked.id)

    with pytest.raises(AppwriteException) as err:
        functions.create_execution(f.id, body="x")
    assert err.value.code == 503 and err.value.type == "function_executor_unavailable"
    assert functions.list_executions(f.id).total == 0
    functions.delete(f.id)
    with pytest.raises(AppwriteException) as err:
        functions.get(f.id)
    assert err.value.type == "function_not_found"
