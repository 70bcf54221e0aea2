"""The notes demo (examples/web-notes, unmodified ``appwrite@27.0.0``) in headless Chromium.

Each test runs one flow of ``examples/web-notes/e2e/flows.mjs`` (Node + playwright-core driving
Debian's ``/usr/bin/chromium``) against a live ASGI server on PostgreSQL and Redis, in two modes:

- ``same``: the server serves the build at ``/demo/`` (``DEMO_ENABLED``); the session is a cookie.
- ``cross``: a static file server on ``http://localhost:<port>`` serves the build; the API is
  ``http://127.0.0.1:<port>`` (another registrable domain), so the session travels in
  ``X-Fallback-Cookies`` from ``localStorage.cookieFallback`` and every call is a CORS request.

Flows that need an API this server does not have yet are skipped by probing it at run time
(404 ``general_route_not_found``, or a realtime socket that never says ``connected``), so they
run by themselves once the feature is merged. Every flow keeps screenshots of the screens it
checks under ``artifacts/browser/screens/``; a failing flow also leaves a screenshot of each page
and the browser console under ``artifacts/browser/``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import pytest
import requests

from conftest import ARTIFACTS, ROOT, Api, LiveServer, free_port, make_project, start_server

WEB = ROOT / "examples" / "web-notes"
BROWSER_ARTIFACTS = ARTIFACTS / "browser"
NODE = shutil.which("node")


def _node_version() -> tuple[int, ...]:
    if NODE is None:
        return ()
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    return tuple(int(part) for part in out.lstrip("v").split(".")[:2] if part.isdigit())


NODE_VERSION = _node_version()
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or ""
DATABASE, TABLE, BUCKET = "webnotes", "notes", "attachments"

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed (browser tests need Node 20.19+)"),
    pytest.mark.skipif(bool(NODE) and NODE_VERSION < (20, 19),
                       reason=f"node {NODE_VERSION} is too old: Vite 7 needs Node 20.19+"),
    pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed (apt-get install -y chromium)"),
    pytest.mark.skipif(not (WEB / "node_modules" / "playwright-core").is_dir(),
                       reason="examples/web-notes/node_modules is missing: run `npm ci` there (.ci/test does)"),
]


@dataclass
class Demo:
    server: LiveServer
    project_id: str
    api: Api
    static_port: int
    features: dict[str, str | None]  # feature -> None when present, else the skip reason
    users: dict[str, tuple[str, str]] = field(default_factory=dict)

    def url(self, mode: str, origin: str = "") -> str:
        """Same origin: ``/demo/`` reads the IDs from the ``config.js`` that setup.py wrote.
        Cross origin: the IDs and the endpoint come as query parameters."""
        if mode == "same":
            return f"{self.server.url}/demo/"
        query = urlencode({"endpoint": self.server.endpoint, "project": self.project_id, "database": DATABASE,
                           "table": TABLE, "bucket": BUCKET})
        return f"{origin or f'http://localhost:{self.static_port}'}/?{query}"

    def user(self, mode: str) -> tuple[str, str]:
        """An account for the flows after sign-up (one per mode, created through the API)."""
        if mode not in self.users:
            email, password = f"notes-{mode}-{time.monotonic_ns()}@example.com", "notes-password-1"
            r = self.api.call("POST", "/account", json={"userId": "unique()", "email": email, "password": password,
                                                        "name": "Ada Lovelace"})
            assert r.status_code == 201, r.text
            self.users[mode] = (email, password)
        return self.users[mode]

    def need(self, *names: str) -> None:
        for name in names:
            if self.features[name]:
                pytest.skip(self.features[name])


def _route_missing(response: requests.Response) -> bool:
    try:
        return response.status_code == 404 and response.json().get("type") == "general_route_not_found"
    except ValueError:
        return False


def _realtime_connects(server: LiveServer, project_id: str) -> bool:
    """True when ``/v1/realtime`` accepts a socket and says ``connected``."""
    from websockets.exceptions import WebSocketException
    from websockets.sync.client import connect

    url = server.endpoint.replace("http://", "ws://") + f"/realtime?project={project_id}"
    try:
        with connect(url, origin=server.url, open_timeout=5) as socket:
            message = json.loads(socket.recv(timeout=5))
            return message.get("type") == "connected"
    except (OSError, TimeoutError, ValueError, WebSocketException):
        return False


def _probe(api: Api, server: LiveServer, project_id: str) -> dict[str, str | None]:
    tablesdb = _route_missing(api.call("GET", "/tablesdb", key=True))
    storage = _route_missing(api.call("GET", "/storage/buckets", key=True))
    return {
        "tablesdb": "databases not merged yet (GET /v1/tablesdb: 404 general_route_not_found)" if tablesdb else None,
        "storage": "storage not merged yet (GET /v1/storage/buckets: 404 general_route_not_found)" if storage else None,
        "realtime": None if _realtime_connects(server, project_id)
        else "realtime not merged yet (/v1/realtime does not answer `connected`)",
    }


def _wait_http(url: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


@pytest.fixture(scope="module")
def demo_dist(tmp_path_factory) -> Path:
    """The demo built once with Vite into a temporary folder (the working copy's dist/ stays)."""
    out = tmp_path_factory.mktemp("web-notes") / "dist"
    result = subprocess.run([NODE, "node_modules/vite/bin/vite.js", "build", "--outDir", str(out), "--emptyOutDir"],
                            cwd=WEB, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (out / "index.html").is_file() and (out / "config.js").is_file()
    return out


@pytest.fixture(scope="module")
def demo(live_env, demo_dist, django_db_blocker):
    static_port = free_port()
    project = make_project(django_db_blocker, origins=(f"http://localhost:{static_port}",))
    server = start_server("asgi", {**live_env, "DEMO_ENABLED": "true", "DEMO_DIR": str(demo_dist)})
    static = subprocess.Popen(
        [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(static_port), "--directory", str(demo_dist)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_http(f"http://127.0.0.1:{static_port}/")
        # The demo's own set-up script, through the API with the project's key (exit 3: a
        # feature it needs is not on this server yet; what exists is still set up). It writes
        # the build's config.js, which both pages read. It sets the password policy with
        # manage.py, so it runs with the server's environment (the test database).
        setup = subprocess.run(
            [sys.executable, str(WEB / "setup.py"), "--endpoint", server.endpoint, "--project", project.id,
             "--key", project.key, "--config", str(demo_dist / "config.js")],
            capture_output=True, text=True, timeout=120, env=live_env,
        )
        api = Api(server, project)
        features = _probe(api, server, project.id)
        expected = 0 if not (features["tablesdb"] or features["storage"]) else 3
        assert setup.returncode == expected, setup.stdout + setup.stderr
        config = (demo_dist / "config.js").read_text()
        assert f'"project": "{project.id}"' in config and '"dictionary": true' in config, config
        yield Demo(server, project.id, api, static_port, features)
    finally:
        static.terminate()
        static.wait(10)
        server.stop()


def run_flow(demo: Demo, flow: str, mode: str, url: str = "", **extra: str) -> None:
    env = {
        **os.environ,
        "DEMO_URL": url or demo.url(mode),
        "PROJECT": demo.project_id,
        "CROSS_ORIGIN": "1" if mode == "cross" else "0",
        "API_ENDPOINT": demo.server.endpoint,
        "ARTIFACTS_DIR": str(BROWSER_ARTIFACTS),
        "CHROMIUM": CHROMIUM,
        "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
        **extra,
    }
    result = subprocess.run([NODE, "e2e/flows.mjs", flow], cwd=WEB, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, f"{flow} ({mode}) failed:\n{result.stdout}\n{result.stderr}"
    assert f"ok {flow}" in result.stdout


def run_user_flow(demo: Demo, flow: str, mode: str) -> None:
    email, password = demo.user(mode)
    run_flow(demo, flow, mode, USER_EMAIL=email, USER_PASSWORD=password)


MODES = ["same", "cross"]


@pytest.mark.parametrize("mode", MODES)
def test_sign_up_log_in_log_out(demo, mode):
    run_flow(demo, "auth", mode)


@pytest.mark.parametrize("mode", MODES)
def test_notes_create_list_edit_delete(demo, mode):
    demo.need("tablesdb")
    run_user_flow(demo, "notes", mode)


@pytest.mark.parametrize("mode", MODES)
def test_attach_upload_download_preview(demo, mode):
    demo.need("tablesdb", "storage")
    run_user_flow(demo, "files", mode)


@pytest.mark.parametrize("mode", MODES)
def test_realtime_update_in_second_context(demo, mode):
    demo.need("tablesdb", "realtime")
    run_user_flow(demo, "realtime", mode)


@pytest.mark.parametrize("mode", MODES)
def test_two_windows_editing_one_note_choose_on_conflict(demo, mode):
    demo.need("tablesdb")
    run_user_flow(demo, "conflict", mode)


def test_load_more_pages_with_a_cursor(demo):
    demo.need("tablesdb")
    run_user_flow(demo, "paging", "same")


def test_layout_desktop_and_phone(demo):
    """1280x800 and 390x844: no sideways scroll, the phone header on one line. Same origin only:
    the layout does not depend on where the API is."""
    demo.need("tablesdb", "storage")
    run_user_flow(demo, "layout", "same")


def test_setup_refuses_common_passwords(demo):
    """The policy setup.py turned on, on the wire: Appwrite's 400 for a common password."""
    r = demo.api.call("POST", "/account", json={"userId": "unique()", "email": f"pw-{time.monotonic_ns()}@example.com",
                                                "password": "password"})
    assert r.status_code == 400 and r.json()["type"] == "general_argument_invalid", r.text
    assert "commonly used" in r.json()["message"]


def test_unregistered_origin_is_refused(demo):
    """The same build from ``http://127.0.0.1:<static port>``, an origin the project lacks."""
    refused_origin = f"http://127.0.0.1:{demo.static_port}"
    run_flow(demo, "refused", "cross", url=demo.url("cross", origin=refused_origin))

    # What the browser saw, on the wire: a preflight without a grant, a 403 without a grant.
    pre = demo.api.call("OPTIONS", "/account", headers={"Origin": refused_origin,
                                                        "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in pre.headers
    r = demo.api.call("POST", "/account", headers={"Origin": refused_origin},
                      json={"userId": "unique()", "email": "eve@example.com", "password": "password1234"})
    assert r.status_code == 403 and r.json()["type"] == "general_unknown_origin"
    assert "Access-Control-Allow-Origin" not in r.headers

    allowed = f"http://localhost:{demo.static_port}"
    ok = demo.api.call("OPTIONS", "/account", headers={"Origin": allowed, "Access-Control-Request-Method": "POST",
                                                       "Access-Control-Request-Headers": "x-fallback-cookies"})
    assert ok.headers["Access-Control-Allow-Origin"] == allowed
    assert ok.headers["Access-Control-Allow-Credentials"] == "true"
    assert "X-Fallback-Cookies" in ok.headers["Access-Control-Allow-Headers"]
