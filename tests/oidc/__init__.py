"""A real OpenID Connect provider process for tests: npm ``oidc-provider`` (an OpenID
Foundation certified implementation) under Node, configured in ``provider.mjs``.

``tests/oidc`` is one npm package (``package.json`` + lockfile; ``.ci/test`` runs ``npm ci``
in it). The ``oidc_provider`` fixture (``conftest.py``) starts one process per test session on
a free port; tests register a client with their callback URLs and drive the scripted login
(:meth:`OIDCProvider.login`) or a browser through the same HTML form (``#login``, ``#signin``,
``#cancel``).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests

NODE_DIR = Path(__file__).parent


@dataclass
class OIDCProvider:
    """A running provider: ``issuer`` is ``http://127.0.0.1:<port>``."""

    issuer: str
    proc: subprocess.Popen
    log: Path

    @property
    def discovery_url(self) -> str:
        return self.issuer + "/.well-known/openid-configuration"

    def register_client(self, redirect_uris: list[str]) -> tuple[str, str]:
        """Register a confidential client (RFC 7591); returns ``(client_id, client_secret)``."""
        r = requests.post(self.issuer + "/reg", json={"redirect_uris": redirect_uris}, timeout=10)
        r.raise_for_status()
        data = r.json()
        return data["client_id"], data["client_secret"]

    def login(self, http: requests.Session, authorization_url: str, login: str | None, *,
              cancel: bool = False) -> str:
        """Play the user at the provider: open ``authorization_url``, sign in as ``login`` (or
        cancel), follow the provider's own redirects; returns the first URL outside the
        provider (the client's callback with ``code`` and ``state``, or ``error``)."""
        url = authorization_url
        for _ in range(10):
            r = http.get(url, allow_redirects=False, timeout=10)
            if r.status_code in (301, 302, 303, 307, 308):
                url = urljoin(url, r.headers["Location"])
                if not url.startswith(self.issuer + "/"):
                    return url
                continue
            assert r.status_code == 200, f"{r.status_code} at {url}: {r.text[:300]}"
            path = urlsplit(url).path
            if not path.startswith("/interaction/"):
                raise AssertionError(f"unexpected provider page {url}")
            action = "abort" if cancel else "login"
            r = http.post(f"{self.issuer}{path}/{action}", data={} if cancel else {"login": login},
                          allow_redirects=False, timeout=10)
            assert r.status_code in (302, 303), f"{r.status_code}: {r.text[:300]}"
            url = urljoin(url, r.headers["Location"])
            if not url.startswith(self.issuer + "/"):
                return url
        raise AssertionError("the provider kept redirecting")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_oidc_provider(port: int, log: Path, wait: float = 30) -> OIDCProvider:
    """Start ``node provider.mjs <port>`` and wait for its discovery document.

    Skips the calling test (saying why) without node or without ``npm ci`` in ``tests/oidc``;
    raises ``RuntimeError`` when the process dies or never answers.
    """
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the OpenID provider runs under Node)")
    if not (NODE_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.skip(f"run `npm ci` in {NODE_DIR} first (.ci/test does)")
    proc = subprocess.Popen(["node", "provider.mjs", str(port)], cwd=NODE_DIR, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)
    provider = OIDCProvider(f"http://127.0.0.1:{port}", proc, log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"oidc-provider exited early:\n{log.read_text()[-2000:]}")
        try:
            if requests.get(provider.discovery_url, timeout=1).status_code == 200:
                return provider
        except requests.RequestException:
            pass
        time.sleep(0.2)
    provider.stop()
    raise RuntimeError(f"oidc-provider did not start:\n{log.read_text()[-2000:]}")
