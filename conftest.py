"""Shared test fixtures: live server processes on the real PostgreSQL and Redis.

pytest-django creates the test database (``test_<name>`` of ``DATABASE_URL``) and migrates it;
the live servers (uvicorn for ASGI, gunicorn for WSGI) are started as real processes on free
ports against that same database, so tests drive them over HTTP exactly as clients do.
Fixtures that create projects and keys write through the ORM, committed at once.
"""

from __future__ import annotations

import http.cookiejar
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from backend.serve import GUNICORN_CONFIG, HTTP_PROTOCOL  # as the launcher passes them

ROOT = Path(__file__).resolve().parent
# Local peers (NTP, TLS, ClamAV, an HTTP origin, a GeoIP database) and the servers that use them.
# tests.lanes puts every test in the default lane (run in parallel) or the full lane (run alone).
pytest_plugins = ["tests.peers", "tests.lanes"]
ARTIFACTS = ROOT / "artifacts"


def _own_redis_prefix_per_worker() -> None:
    """Under pytest-xdist, each worker is its own deployment on the shared ``REDIS_URL`` database:
    ``REDIS_PREFIX`` gets the worker's name, so the cache invalidations (tagged with database row
    ids, which repeat across the workers' databases) and the realtime stream of one worker never
    reach another's servers. Set in the environment (the servers inherit it through ``live_env``)
    and in the settings already loaded in this process."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or os.environ.get("REDIS_PREFIX", "").endswith(f".{worker}."):
        return  # not a worker, or a process a worker started (it inherits the environment)
    from django.conf import settings

    prefix = f"{settings.REDIS_PREFIX}{worker}."
    os.environ["REDIS_PREFIX"] = settings.REDIS_PREFIX = prefix


_own_redis_prefix_per_worker()


# argon2 parameters of the suite's servers (see live_env): distinct from both the production
# default and Appwrite's t=4, m=2048, p=3, so a test can tell which parameters made a hash.
TEST_ARGON2 = {"ARGON2_TIME_COST": "1", "ARGON2_MEMORY_COST_KIB": "4096", "ARGON2_PARALLELISM": "1"}


def argon2_prefix(env: dict[str, str]) -> str:
    """The start of the hashes a server started with ``env`` (``live_env`` or a copy) makes:
    ``argon2$argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$``."""
    return (f"argon2$argon2id$v=19$m={env['ARGON2_MEMORY_COST_KIB']},t={env['ARGON2_TIME_COST']},"
            f"p={env['ARGON2_PARALLELISM']}$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    """A server process: ``url`` is ``http://127.0.0.1:<port>`` (no ``/v1``)."""

    kind: str
    url: str
    port: int
    proc: subprocess.Popen
    log: Path

    @property
    def endpoint(self) -> str:
        return self.url + "/v1"

    def stop(self, sig=signal.SIGTERM, timeout: float = 15) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


SERVER_COMMANDS = {
    # One ASGI process, as in the compose `api` service. --no-proxy-headers: uvicorn would otherwise
    # rewrite the client address from X-Forwarded-For for peers on 127.0.0.1; TRUSTED_PROXIES
    # (apps/core/http/clientip.py) is the one place that decides whom to believe.
    "asgi": lambda port: [sys.executable, "-m", "uvicorn", "backend.asgi:application", "--host", "127.0.0.1",
                          "--port", str(port), "--no-access-log", "--loop", "uvloop", "--http", HTTP_PROTOCOL,
                          "--lifespan", "on", "--timeout-graceful-shutdown", "10", "--no-proxy-headers"],
    # The WSGI baseline: gunicorn sync workers (worker class and head limits from its config module).
    "wsgi": lambda port: [sys.executable, "-m", "gunicorn", "backend.wsgi:application", "--bind",
                          f"127.0.0.1:{port}", "--workers", "2", "--timeout", "60", "--graceful-timeout", "10",
                          "--config", GUNICORN_CONFIG],
}


@dataclass
class PrivateRedis:
    """A throw-away ``redis-server`` on its own free port, never the shared one, that a test may
    stop and start again. Without ``data_dir`` it keeps nothing across a restart; with it, it
    saves to ``data_dir/dump.rdb`` on shutdown and loads it on start (a graceful restart)."""

    port: int
    data_dir: Path | None = None
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import shutil

        import redis

        persist = ["--dir", str(self.data_dir), "--save", "3600 1"] if self.data_dir else ["--save", ""]
        self.proc = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--appendonly", "no", *persist],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


def start_server(kind: str, env: dict[str, str], port: int | None = None, command: list[str] | None = None,
                 wait: float = 40) -> LiveServer:
    """Start a server process and wait until ``/v1/health/version`` answers 200."""
    port = port or free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / f"server-{kind}-{port}.log"
    cmd = command or SERVER_COMMANDS[kind](port)
    # The address mailed links and OAuth2 callbacks are built from: this server's own, as an
    # operator sets PUBLIC_URL to the address clients use.
    env = {"PUBLIC_URL": f"http://127.0.0.1:{port}", **env}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    server = LiveServer(kind, f"http://127.0.0.1:{port}", port, proc, log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} server exited early:\n{log.read_text()[-3000:]}")
        try:
            if requests.get(server.endpoint + "/health/version", timeout=1).status_code == 200:
                return server
        except requests.RequestException:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"{kind} server did not start:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_modify_db_settings, django_db_blocker):
    """Always create and migrate the test database (pytest-django only does so for tests marked
    ``django_db``; live-server tests use it through their server processes).

    ``django_db_modify_db_settings`` gives each pytest-xdist worker its own database
    (``test_<name>_gw0``, ``test_<name>_gw1``, ...); ``live_env`` hands that name to the servers."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
        if hasattr(connection, "close_pool"):
            connection.close_pool()
    yield
    with django_db_blocker.unblock():
        teardown_databases(config, verbosity=0)


@pytest.fixture(scope="session")
def live_env(django_db_setup, django_db_blocker, tmp_path_factory) -> dict[str, str]:
    """Environment for server processes: the pytest-django test database, same Redis, the test
    process's SECRET_KEY, and a temporary STORAGE_ROOT (file bytes never land in the repository)."""
    from django.conf import settings
    from django.db import connection

    with django_db_blocker.unblock():
        name = connection.settings_dict["NAME"]
    env = dict(os.environ)
    if settings.DATABASE_URL:
        db = connection.settings_dict
        env["DATABASE_URL"] = f"postgres://{db['USER'] or ''}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"
    else:
        env["SQLITE_PATH"] = name
    # Small pools, kept empty while idle (min 0): a run keeps up to three session servers (ASGI, WSGI with two workers, the
    # pure ASGI build) and a module's own servers alive at once, each ASGI process with two
    # pools (/v1 and Django's). With the production default of 20 the suite held up to 62
    # PostgreSQL connections; tests that need more concurrency queue on the pool (its wait is
    # DB_POOL_TIMEOUT) instead of taking a shared server's connections. Under pytest-xdist each
    # worker has its own session servers (the default lane starts no naive build): with two
    # workers the run peaked at 30 connections to its databases. Idle connections are
    # closed after 30 s instead of 5 min, so a burst in one module does not pin them for the next.
    env.setdefault("DB_POOL_MIN_SIZE", "0")
    env.setdefault("DB_POOL_MAX_SIZE", "4")
    env.setdefault("DB_POOL_MAX_IDLE", "30")
    # Cheap password hashing for the servers of the suite, which creates and signs in thousands
    # of users: the production default (OWASP's argon2id, about 30 ms of CPU per hash) added half
    # again to the CPU time of the account tests on the 2-core test machine. These are the
    # settings' own ARGON2_* overrides, so exporting ARGON2_* runs the suite at other costs; the
    # tests of the defaults and of re-hashing start servers without them (TEST_ARGON2 names them).
    for name, value in TEST_ARGON2.items():
        env.setdefault(name, value)
    # One signing key for the test process and every server of the session, whichever data folder
    # a server is given: sessions, JWTs and file tokens made by one are checked by the others.
    env["SECRET_KEY"] = settings.SECRET_KEY
    env["STORAGE_ROOT"] = str(tmp_path_factory.mktemp("storage"))
    env.pop("STORAGE_UPLOAD_DIR", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="session")
def asgi_server(live_env):
    server = start_server("asgi", live_env)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def wsgi_server(live_env):
    server = start_server("wsgi", live_env)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def lean_asgi_server(live_env):
    """The ASGI build with every /v1 request through uvicorn's httptools protocol and the lean
    ASGI adapter (``V1_PROTOCOL=asgi``; the load tests' ``asgi`` build)."""
    server = start_server("asgi", {**live_env, "V1_PROTOCOL": "asgi", "V1_ADAPTER": "lean"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def naive_server(live_env):
    """The ASGI build with /v1 served through Django's ASGI handler (``V1_ADAPTER=django``)."""
    server = start_server("asgi", {**live_env, "V1_ADAPTER": "django"})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def default_hashing_server(live_env):
    """An ASGI server of the module's own with the production argon2 parameters (``live_env``
    without the suite's cheap :data:`TEST_ARGON2`)."""
    server = start_server("asgi", {k: v for k, v in live_env.items() if k not in TEST_ARGON2})
    yield server
    server.stop()


# The builds every test using ``server`` runs on: the product default (``asgi``: uvicorn, /v1 on
# the direct protocol), the pure ASGI path (``lean_asgi``: httptools + the lean ASGI adapter)
# and the WSGI baseline. The naive build (Django's handler, ``naive_server``) has its own smoke
# module (tests/test_naive_build.py). tests/lanes.py puts the lean_asgi copies in the full lane
# except those of the HTTP edge (apps/core/tests/), where the two protocols differ most.
BUILDS = ["asgi", "lean_asgi", "wsgi"]


# A test decorated with this runs on the naive build too: the naive build's smoke tests (a handful
# of representative behaviours: an SDK account flow, rows, a file round trip, the realtime
# handshake, a rate-limit refusal), in the full lane like every naive copy (tests/lanes.py).
EVERY_BUILD = pytest.mark.parametrize("server", [*BUILDS, "naive"], indirect=True)


@pytest.fixture(params=BUILDS)
def server(request) -> LiveServer:
    """Each test using it runs against every build of :data:`BUILDS`: behaviour must be identical."""
    return request.getfixturevalue(f"{request.param}_server")


@dataclass
class ProjectInfo:
    id: str
    key: str
    pk: int


_counter = [0]


def make_project(django_db_blocker, *, origins: tuple[str, ...] = (), scopes: list[str] | None = None) -> ProjectInfo:
    """A fresh project with an API key (all scopes unless ``scopes``), committed."""
    from apps.core.http.auth import KEY_SCOPES
    from apps.projects.services import api_key_create, project_create

    _counter[0] += 1
    pid = f"p{os.getpid()}-{_counter[0]}-{int(time.time() * 1000) % 100000}"
    with django_db_blocker.unblock():
        project = project_create(project_id=pid, name=pid, origins=list(origins))
        _, secret = api_key_create(project_id=pid, name="tests", scopes=scopes or sorted(KEY_SCOPES))
    return ProjectInfo(id=pid, key=secret, pk=project.pk)


@pytest.fixture
def project(django_db_setup, django_db_blocker) -> ProjectInfo:
    return make_project(django_db_blocker)


def drop_cached(*tags: str) -> None:
    """Drop ``tags`` from every live server's caches (apps/core/drivers/cache.py), as the services do
    after a write; for tests that change the database with SQL behind the services' back."""
    import redis
    from django.conf import settings

    from apps.core.drivers.cache import channel

    redis.Redis.from_url(settings.REDIS_URL).publish(channel(), "\n".join(tags).encode())


@pytest.fixture
def sql(django_db_setup, django_db_blocker):
    """Run SQL on the test database (committed): ``sql(query, params) -> list[tuple]``."""

    def run(query: str, params=()):
        from django.db import connection

        with django_db_blocker.unblock():
            with connection.cursor() as cur:
                cur.execute(query, params)
                return cur.fetchall() if cur.description else []

    return run


class Api:
    """A small HTTP client for one project on one live server.

    ``call(method, path, json=..., headers=..., key=True)`` sends ``X-Appwrite-Project`` and, with
    ``key=True``, the project's API key; ``session=<token>`` sends ``X-Appwrite-Session``.
    """

    def __init__(self, server: LiveServer, project: ProjectInfo):
        self.server = server
        self.project = project
        self.http = requests.Session()
        # Like the server SDK: never replay cookies from earlier responses.
        self.http.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))

    def call(self, method: str, path: str, *, json=None, data=None, params=None, files=None, headers=None,
             key: bool = False, session: str | None = None, project: bool = True, timeout: float = 30):
        h = {}
        if project:
            h["X-Appwrite-Project"] = self.project.id
        if key:
            h["X-Appwrite-Key"] = self.project.key
        if session:
            h["X-Appwrite-Session"] = session
        h.update(headers or {})
        return self.http.request(method, self.server.endpoint + path, json=json, data=data, params=params,
                                 files=files, headers=h, timeout=timeout)

    def signup(self, email: str | None = None, password: str = "password123", name: str = "") -> tuple[dict, str]:
        """Create a user and an email session; returns ``(user, session token)``."""
        email = email or f"u{time.monotonic_ns()}@example.com"
        r = self.call("POST", "/account", json={"userId": "unique()", "email": email, "password": password, "name": name})
        assert r.status_code == 201, r.text
        s = self.call("POST", "/account/sessions/email", json={"email": email, "password": password}, key=True)
        assert s.status_code == 201, s.text
        return r.json(), s.json()["secret"]


@pytest.fixture
def api(asgi_server, project) -> Api:
    return Api(asgi_server, project)


@pytest.fixture(scope="session")
def oidc_provider():
    """A real OpenID Connect provider (npm ``oidc-provider``, ``tests/oidc``) on a free port,
    for the whole test session; see :class:`tests.oidc.OIDCProvider`."""
    from tests.oidc import start_oidc_provider

    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    provider = start_oidc_provider(port, ARTIFACTS / f"oidc-provider-{port}.log")
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def smtp_server(tmp_path_factory):
    """A real SMTP server process (aiosmtpd) for the whole session; see ``tests/mail``."""
    from tests.mail import start_smtp_server

    server = start_smtp_server(tmp_path_factory.mktemp("smtp"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mail_worker(live_env, smtp_server):
    """The background worker process (``manage.py worker``) on the live servers' database,
    sending through :func:`smtp_server`. Tests that need it stopped call ``stop()`` and
    ``start()`` it again when done."""
    from tests.mail import start_worker

    ARTIFACTS.mkdir(exist_ok=True)
    env = {**live_env, **smtp_server.env, "TASKS_RETRY_DELAY": "1", "TASKS_POLL_INTERVAL": "0.2"}
    # Queues "default" and "deletes" are left to tests that run workers of their own (fault tests,
    # background deletes), so they control when those tasks run.
    worker = start_worker(env, ARTIFACTS / f"worker-{os.getpid()}.log", "--queues", "mails")
    yield worker
    worker.stop()


# --- mail flows: a project whose web origin mailed links may point to, and a client on it ------

ORIGIN = "http://localhost:5173"


@pytest.fixture
def app_project(django_db_setup, django_db_blocker):
    """A project with ``ORIGIN`` registered as a web platform."""
    return make_project(django_db_blocker, origins=(ORIGIN,))


@pytest.fixture
def mail_api(asgi_server, app_project, mail_worker, smtp_server) -> Api:
    """An :class:`Api` on ``app_project`` with the worker running; ``api.smtp`` is the SMTP server."""
    api = Api(asgi_server, app_project)
    api.smtp = smtp_server
    return api
