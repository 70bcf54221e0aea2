"""Functions test helpers: functions and code uploads through the live servers' HTTP API."""

from __future__ import annotations

import io
import itertools
import os
import tarfile

import pytest

CHUNK = 5 * 1024 * 1024
_ids = itertools.count()


def new_id(prefix: str = "x") -> str:
    return f"{prefix}{next(_ids)}-{os.getpid()}"


def make_function(api, **fields) -> dict:
    body = {"functionId": new_id("f"), "name": "test function", "runtime": "python-3.13", **fields}
    r = api.call("POST", "/functions", json=body, key=True)
    assert r.status_code == 201, r.text
    return r.json()


def targz(files: dict[str, str | bytes]) -> bytes:
    """A ``.tar.gz`` of ``{path: content}``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def upload_code(api, function_id: str, data: bytes, *, filename: str = "code.tar.gz", activate: bool = True,
                **fields):
    form = {"activate": "true" if activate else "false", **fields}
    return api.call("POST", f"/functions/{function_id}/deployments", data=form,
                    files={"code": (filename, io.BytesIO(data))}, key=True)


@pytest.fixture
def api(asgi_server, project):
    from conftest import Api

    return Api(asgi_server, project)
