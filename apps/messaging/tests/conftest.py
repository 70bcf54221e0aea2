"""Fixtures of the messaging tests: the local provider servers, a worker sending through them
(queue ``messaging``), and an SDK client on a fresh project."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from appwrite.client import Client

from apps.messaging.tests.fake_apns import ApnsServer
from apps.messaging.tests.fake_providers import HttpProviders, Keys
from conftest import ARTIFACTS, ROOT, Api, ProjectInfo, start_server


@pytest.fixture(scope="session")
def push_keys() -> Keys:
    return Keys.make()


@pytest.fixture(scope="session")
def providers(push_keys):
    """The local SMS/email/FCM server and the APNs HTTP/2 server (``providers.apns``)."""
    http = HttpProviders(push_keys)
    http.apns = ApnsServer(push_keys, http.received)
    yield http
    http.apns.stop()
    http.stop()


def endpoints_env(providers) -> str:
    names = ("twilio", "vonage", "msg91", "telesign", "textmagic", "mailgun", "sendgrid", "resend", "fcm", "ses")
    return ",".join([f"{n}={providers.url}" for n in names] + [f"apns={providers.apns.url}",
                                                                 f"apns-sandbox={providers.apns.url}"])


@pytest.fixture(scope="session")
def messaging_worker(live_env, providers):
    """``manage.py worker --queues messaging`` sending to the local providers; two attempts per
    message, 0.3 s apart."""
    from tests.mail import start_worker

    ARTIFACTS.mkdir(exist_ok=True)
    env = {**live_env, "MESSAGING_ENDPOINTS": endpoints_env(providers), "TASKS_MAX_ATTEMPTS": "2",
           "TASKS_RETRY_DELAY": "0.3", "TASKS_POLL_INTERVAL": "0.2", "MESSAGING_TIMEOUT": "3"}
    worker = start_worker(env, ARTIFACTS / f"messaging-worker-{os.getpid()}.log", "--queues", "messaging")
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def embedded_server(tmp_path_factory, providers):
    """The embedded default (SQLite, no Redis, the in-process worker) with project ``embedded``
    and an all-scopes key, sending to the local providers."""
    path = tmp_path_factory.mktemp("embedded-messaging") / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SQLITE_PATH=str(path), PYTHONUNBUFFERED="1", MESSAGING_ENDPOINTS=endpoints_env(providers),
               TASKS_POLL_INTERVAL="0.2", TASKS_RETRY_DELAY="0.3", TASKS_MAX_ATTEMPTS="2")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "createproject", "embedded"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([*manage, "createapikey", "embedded", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    server = start_server("asgi", env)
    yield server, ProjectInfo(id="embedded", key=key, pk=0)
    server.stop()


def _client(endpoint: str, project: ProjectInfo) -> Client:
    return Client().set_endpoint(endpoint).set_project(project.id).set_key(project.key)


@pytest.fixture
def key_client(asgi_server, project) -> Client:
    return _client(asgi_server.endpoint, project)


@pytest.fixture(params=["postgres", "embedded"])
def any_key_client(request) -> Client:
    """An API-key client on the ASGI build over PostgreSQL, and on the embedded SQLite default."""
    if request.param == "embedded":
        server, project = request.getfixturevalue("embedded_server")
        return _client(server.endpoint, project)
    return _client(request.getfixturevalue("asgi_server").endpoint, request.getfixturevalue("project"))


@pytest.fixture
def mapi(api) -> Api:
    return api
