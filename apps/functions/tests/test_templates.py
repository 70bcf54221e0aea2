"""Template deployments end to end without a container engine: a local HTTP server process
(``python -m http.server``) serves repository archives in GitHub's URL shape as
``FUNCTIONS_TEMPLATE_SOURCE``; the worker downloads one, keeps ``rootDirectory`` as the
deployment's source (downloaded back and compared), then its build fails for want of an engine.
Downloads that cannot work (missing reference, missing directory, too large, not an archive)
fail the deployment with the reason in its build log. Bad input is ``test_api.py``'s table."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import time

import pytest
import requests

from apps.functions.tests.conftest import make_function, targz
from conftest import ARTIFACTS, Api, free_port, start_server
from tests.mail import start_worker, wait_until

SIZE_LIMIT = 200_000
FILES = {
    "tpl-main/README.md": "# templates\n",
    "tpl-main/python/starter/main.py": "def main(context):\n    return context.res.text('hi')\n",
    "tpl-main/python/starter/lib/util.py": "X = 1\n",
    "tpl-main/node/starter/index.js": "module.exports = async ({ res }) => res.text('hi');\n",
}


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """A directory served over HTTP: ``/<owner>/<repository>/archive/...`` archives."""
    root = tmp_path_factory.mktemp("templates")

    def put(path: str, data: bytes) -> None:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    put("acme/tpl/archive/refs/heads/main.tar.gz", targz(FILES))
    put("acme/tpl/archive/refs/tags/v1.0.0.tar.gz", targz(FILES))
    put("acme/tpl/archive/0123abcd.tar.gz", targz(FILES))
    put("acme/tpl/archive/refs/heads/huge.tar.gz", targz({"tpl-huge/blob.bin": os.urandom(SIZE_LIMIT + 1)}))
    put("acme/tpl/archive/refs/heads/garbage.tar.gz", b"this is not a gzip file")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: _up(base), timeout=20, what="the archive server", every=0.1)
    yield base
    proc.terminate()
    proc.wait(10)


def _up(base: str) -> bool:
    try:
        return requests.get(base + "/acme/tpl/archive/0123abcd.tar.gz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def server(archives, live_env):
    """An API server and a worker (queue ``functions``) with the archive server as the source."""
    env = {**live_env, "FUNCTIONS_TEMPLATE_SOURCE": archives, "FUNCTIONS_SIZE_LIMIT": str(SIZE_LIMIT),
           "FUNCTIONS_TEMPLATE_TIMEOUT": "10", "TASKS_POLL_INTERVAL": "0.2"}
    srv = start_server("asgi", env)
    worker = start_worker(env, ARTIFACTS / f"worker-templates-{os.getpid()}.log", "--queues", "functions")
    yield srv
    worker.stop()
    srv.stop()


def _deploy(api: Api, fid: str, **body) -> dict:
    r = api.call("POST", f"/functions/{fid}/deployments/template", key=True,
                 json={"repository": "tpl", "owner": "acme", "activate": True, **body})
    assert r.status_code == 202, r.text
    d = r.json()
    assert d["status"] == "waiting" and d["type"] == "vcs" and d["resourceId"] == fid
    assert d["providerRepositoryOwner"] == "acme" and d["providerRepositoryName"] == "tpl"
    done = wait_until(lambda: (lambda x: x if x["status"] in ("ready", "failed") else None)(
        api.call("GET", f"/functions/{fid}/deployments/{d['$id']}", key=True).json()), timeout=60,
        what="the template's build", every=0.2)
    return done


def _source(api: Api, fid: str, deployment_id: str) -> dict[str, bytes]:
    r = api.call("GET", f"/functions/{fid}/deployments/{deployment_id}/download", key=True)
    assert r.status_code == 200, r.text
    with tarfile.open(fileobj=io.BytesIO(r.content), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


@pytest.mark.parametrize("kind,reference", [("branch", "main"), ("tag", "v1.0.0"), ("commit", "0123abcd")])
def test_template_directory_becomes_the_source(server, archives, project, kind, reference):
    api = Api(server, project)
    fid = make_function(api)["$id"]
    d = _deploy(api, fid, rootDirectory="python/starter/", type=kind, reference=reference)
    assert d["providerBranch"] == (reference if kind == "branch" else "")
    assert d["providerRepositoryUrl"] == f"{archives}/acme/tpl"
    # The download worked; without a container engine the build itself then fails, saying so.
    assert d["status"] == "failed" and "No container engine" in d["buildLogs"], d["buildLogs"]
    assert d["sourceSize"] > 0
    files = FILES["tpl-main/python/starter/main.py"].encode(), FILES["tpl-main/python/starter/lib/util.py"].encode()
    assert _source(api, fid, d["$id"]) == {"main.py": files[0], "lib/util.py": files[1]}


def test_template_whole_repository(server, project):
    """Through the unmodified Python SDK (``createTemplateDeployment``); empty ``rootDirectory``."""
    from appwrite.client import Client
    from appwrite.enums.template_reference_type import TemplateReferenceType
    from appwrite.services.functions import Functions

    api = Api(server, project)
    fid = make_function(api)["$id"]
    sdk = Functions(Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key))
    made = sdk.create_template_deployment(fid, "tpl", "acme", "", TemplateReferenceType.BRANCH, "main")
    assert made.type == "vcs" and made.providerbranch == "main" and made.activate is False
    d = wait_until(lambda: (lambda x: x if x["status"] in ("ready", "failed") else None)(
        api.call("GET", f"/functions/{fid}/deployments/{made.id}", key=True).json()), timeout=60,
        what="the template's build", every=0.2)
    assert set(_source(api, fid, d["$id"])) == {"README.md", "python/starter/main.py", "python/starter/lib/util.py",
                                                 "node/starter/index.js"}


FAILURES = [
    # (name, body, words of the build log)
    ("no such reference", {"type": "branch", "reference": "nope", "rootDirectory": ""}, "HTTP 404"),
    ("no such directory", {"type": "branch", "reference": "main", "rootDirectory": "ruby/starter"},
     "no directory 'ruby/starter'"),
    ("over the size limit", {"type": "branch", "reference": "huge", "rootDirectory": ""}, "FUNCTIONS_SIZE_LIMIT"),
    ("not an archive", {"type": "branch", "reference": "garbage", "rootDirectory": ""}, "not a valid .tar.gz"),
]


@pytest.mark.parametrize("name,body,words", FAILURES, ids=[f[0] for f in FAILURES])
def test_template_download_failures(server, project, name, body, words):
    api = Api(server, project)
    fid = make_function(api)["$id"]
    started = time.monotonic()
    d = _deploy(api, fid, **body)
    assert d["status"] == "failed" and words in d["buildLogs"], d["buildLogs"]
    assert d["sourceSize"] == 0 and time.monotonic() - started < 30
    r = api.call("GET", f"/functions/{fid}/deployments/{d['$id']}/download", key=True)
    assert r.status_code == 404 and r.json()["type"] == "deployment_not_found"  # nothing half-written
