"""The /demo/ static view: files from DEMO_DIR with the right types, index fallback, no escape."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests
from django.http import Http404
from django.test import RequestFactory
from django.urls import Resolver404, resolve

from apps.demo.views import demo_file
from conftest import ROOT, start_server


@pytest.fixture
def dist(tmp_path, settings):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>notes</title>")
    (tmp_path / "config.js").write_text("window.WEB_NOTES_CONFIG = {};")
    (tmp_path / "assets" / "index-abc123.js").write_text("export {};")
    (tmp_path / "assets" / "index-abc123.css").write_text("body{}")
    (tmp_path / "assets" / "logo.svg").write_text("<svg/>")
    (tmp_path.parent / "secret.txt").write_text("outside")
    settings.DEMO_DIR = tmp_path
    return tmp_path


def get(path: str, method: str = "get"):
    request = getattr(RequestFactory(), method)(f"/demo/{path}")
    return demo_file(request, path=path)


@pytest.mark.parametrize(("path", "content_type", "cache", "body"), [
    ("", "text/html; charset=utf-8", "no-cache", b"<!doctype html>"),
    ("index.html", "text/html; charset=utf-8", "no-cache", b"<!doctype html>"),
    ("config.js", "text/javascript; charset=utf-8", "no-cache", b"window.WEB_NOTES_CONFIG"),
    ("assets/index-abc123.js", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", b"export"),
    ("assets/index-abc123.css", "text/css; charset=utf-8", "public, max-age=31536000, immutable", b"body"),
    ("assets/logo.svg", "image/svg+xml", "public, max-age=31536000, immutable", b"<svg"),
    # Paths without an extension are the app's own routes: index.html.
    ("notes/42", "text/html; charset=utf-8", "no-cache", b"<!doctype html>"),
])
def test_files_and_fallback(dist, path, content_type, cache, body):
    response = get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["Cache-Control"] == cache
    assert response.content.startswith(body)


@pytest.mark.parametrize("path", [
    "assets/missing.js",      # a missing asset is a 404, never index.html run as a script
    "../secret.txt",          # no way out of DEMO_DIR
    "assets/../../secret.txt",
    "assets/..%2F..%2Fsecret.txt",
])
def test_missing_or_outside_is_404(dist, path):
    with pytest.raises(Http404):
        get(path)


@pytest.mark.parametrize("path", ["/etc/passwd", "../../../../etc/passwd", "assets"])
def test_extensionless_paths_get_the_app_not_the_file(dist, path):
    response = get(path)
    assert response.content.startswith(b"<!doctype html>")  # not a file outside, not a listing


def test_only_get_and_head(dist):
    assert get("index.html", "head").status_code == 200
    assert get("index.html", "post").status_code == 405


def test_unbuilt_demo_is_404(tmp_path, settings):
    settings.DEMO_DIR = tmp_path
    with pytest.raises(Http404):
        get("")


def test_not_mounted_by_default():
    with pytest.raises(Resolver404):
        resolve("/demo/")


def test_enabled_without_a_build_fails_clearly(tmp_path):
    check = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup()"
    env = {**os.environ, "DEMO_ENABLED": "true", "DEMO_DIR": str(tmp_path / "nothing")}
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "DEMO_ENABLED is true but" in result.stderr and "index.html does not exist" in result.stderr


def test_live_server_serves_the_demo_when_enabled(live_env, dist):
    server = start_server("asgi", {**live_env, "DEMO_ENABLED": "true", "DEMO_DIR": str(dist)})
    try:
        page = requests.get(server.url + "/demo/", timeout=10)
        assert page.status_code == 200 and page.headers["Content-Type"] == "text/html; charset=utf-8"
        script = requests.get(server.url + "/demo/assets/index-abc123.js", timeout=10)
        assert script.headers["Content-Type"] == "text/javascript; charset=utf-8"
        bare = requests.get(server.url + "/demo", allow_redirects=False, timeout=10)
        assert bare.status_code == 302 and bare.headers["Location"] == "/demo/"
        missing = requests.get(server.url + "/demo/nope.js", timeout=10)
        assert missing.status_code == 404 and missing.headers["Content-Type"].startswith("text/html")  # the demo's own
        # The API still answers beside it.
        assert requests.get(server.endpoint + "/health/version", timeout=10).json()["version"]
    finally:
        server.stop()
