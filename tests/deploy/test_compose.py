"""docker-compose.yml, Dockerfile and .env.example, checked without a Docker engine.

The compose file is parsed (YAML merge keys resolved) and interpolated with .env.example the way
``docker compose`` does; the app services' environments are then loaded by the real
``backend/settings/`` in production mode, so a missing required setting fails here.
"""

from __future__ import annotations

import re
import secrets
import subprocess
import sys

import pytest
import yaml

from tests.deploy.support import NGINX_TEMPLATE, ROOT

APP_SERVICES = ("migrate", "api", "worker", "baseline")
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def read_env_file(path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def interpolate(value, env: dict[str, str]):
    """Compose variable interpolation: ``${V}``, ``${V:-d}``, ``${V-d}``, ``${V:?e}``, ``$$``."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(4)
        op, arg = m.group(2), m.group(3)
        current = env.get(name)
        if op in (":-", "-"):
            return current if (current if op == ":-" else current is not None) else arg
        if op in (":?", "?"):
            if not current:
                raise ValueError(f"required variable {name}: {arg}")
            return current
        return current or ""

    return _VAR.sub(sub, value)


def compose_vars(text: str) -> set[str]:
    return {m.group(1) or m.group(4) for m in _VAR.finditer(text) if m.group(0) != "$$"}


RAW = (ROOT / "docker-compose.yml").read_text()
RAW_ENV_EXAMPLE = read_env_file(ROOT / ".env.example")
# The operator fills in the two secrets .env.example leaves empty (README "Deployment").
ENV_EXAMPLE = {**RAW_ENV_EXAMPLE, "SECRET_KEY": "k" * 64, "POSTGRES_PASSWORD": "test-password"}
COMPOSE = interpolate(yaml.safe_load(RAW), ENV_EXAMPLE)
SERVICES = COMPOSE["services"]


def settings_env_names() -> set[str]:
    text = "".join(p.read_text() for p in sorted((ROOT / "backend" / "settings").glob("*.py")))
    return set(re.findall(r'_env\w*\("([A-Z0-9_]+)"', text))


def test_services_and_profiles():
    assert set(SERVICES) == {"postgres", "redis", "migrate", "api", "worker", "mail", "lb", "baseline", "k6"}
    profiles = {name: s.get("profiles", []) for name, s in SERVICES.items()}
    assert profiles == {"postgres": [], "redis": [], "migrate": [], "api": [], "worker": [], "mail": [], "lb": [],
                        "baseline": ["baseline"], "k6": ["loadtest"]}


def test_images_and_commands():
    assert SERVICES["postgres"]["image"].startswith("postgis/postgis:")  # PostgreSQL with PostGIS
    assert SERVICES["redis"]["image"].startswith("redis:")
    assert SERVICES["lb"]["image"].startswith("nginx:")
    assert SERVICES["k6"]["image"].startswith("grafana/k6:")
    assert SERVICES["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert SERVICES["migrate"]["restart"] == "no"
    assert SERVICES["api"]["command"] == ["python", "-m", "backend.serve"]
    assert SERVICES["baseline"]["command"] == ["python", "-m", "backend.serve", "wsgi"]
    assert SERVICES["worker"]["command"] == ["python", "manage.py", "worker"]
    assert SERVICES["mail"]["image"].startswith("axllent/mailpit:v")
    for name in APP_SERVICES:
        assert SERVICES[name]["build"] == "."


@pytest.mark.parametrize("name", ["postgres", "redis", "api", "mail", "lb", "baseline"])
def test_healthchecks(name):
    check = SERVICES[name]["healthcheck"]
    assert check["test"] and check["interval"] and check["retries"]
    if name in ("api", "baseline"):
        assert "/v1/health/version" in " ".join(check["test"])


def test_depends_on_conditions():
    dep = {name: s.get("depends_on", {}) for name, s in SERVICES.items()}
    assert dep["migrate"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("api", "baseline"):
        assert dep[name]["migrate"] == {"condition": "service_completed_successfully"}
        assert dep[name]["postgres"] == {"condition": "service_healthy"}
        assert dep[name]["redis"] == {"condition": "service_healthy"}
    assert dep["lb"] == {"api": {"condition": "service_healthy"}}
    assert dep["worker"] == {"migrate": {"condition": "service_completed_successfully"},
                             "postgres": {"condition": "service_healthy"}, "mail": {"condition": "service_healthy"}}


def test_mail_goes_to_mailpit_by_default():
    """API and worker send through the bundled Mailpit unless SMTP_HOST says otherwise; its web
    page is the one other published port."""
    for name in ("api", "worker", "baseline"):
        env = SERVICES[name]["environment"]
        assert (env["SMTP_HOST"], env["SMTP_PORT"]) == ("mail", "1025")
    assert SERVICES["mail"]["expose"] == ["1025"] and SERVICES["mail"]["ports"] == ["8025:8025"]
    custom = interpolate(yaml.safe_load(RAW), {**ENV_EXAMPLE, "SMTP_HOST": "smtp.example.com", "SMTP_PORT": "587",
                                               "SMTP_SECURE": "tls"})["services"]["worker"]["environment"]
    assert (custom["SMTP_HOST"], custom["SMTP_PORT"], custom["SMTP_SECURE"]) == ("smtp.example.com", "587", "tls")


def test_worker_stops_gracefully():
    """The worker finishes its running task on SIGTERM: compose must wait longer than a task's
    longest step (an SMTP send is bounded by SMTP_TIMEOUT)."""
    grace = int(SERVICES["worker"]["stop_grace_period"].rstrip("s"))
    assert grace > 2 * 15  # SMTP_TIMEOUT's default, for connect + send


def test_volumes():
    assert set(COMPOSE["volumes"]) == {"pgdata", "files"}
    assert "pgdata:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]
    assert "files:/data/files" in SERVICES["api"]["volumes"]
    assert "./loadtests:/scripts:ro" in SERVICES["k6"]["volumes"]
    assert (ROOT / "loadtests").is_dir()


def test_api_scales_out():
    """`--scale api=N` needs an api without a fixed host port; only lb and baseline publish one."""
    api = SERVICES["api"]
    assert "ports" not in api and "container_name" not in api and api["expose"] == ["8000"]
    assert api["cpus"] == "1"  # one process, one core: --scale api=2 matches BASELINE_CPUS=2
    published = {name for name, s in SERVICES.items() if s.get("ports")}
    assert published == {"lb", "baseline", "mail"}


def test_functions_run_in_the_hosts_engine_on_a_network_of_their_own():
    """api and worker reach the host's engine through its socket (configurable) and the runtime
    containers on FUNCTIONS_NETWORK; nothing else gets the socket, and the services holding the
    data (PostgreSQL, Redis, mail) and the lb are not on the runtime network."""
    runtimes = COMPOSE["networks"]["runtimes"]
    for name in ("api", "worker"):
        service = SERVICES[name]
        env = service["environment"]
        assert env["FUNCTIONS_EXECUTOR"] == "docker" and env["FUNCTIONS_DOCKER_HOST"] == "unix:///var/run/docker.sock"
        assert "/var/run/docker.sock:/var/run/docker.sock" in service["volumes"]
        assert "files:/data/files" in service["volumes"]  # FUNCTIONS_ROOT, shared by api and worker
        assert service["group_add"] == ["0"]
        assert set(service["networks"]) == {"backend", "runtimes"}
        assert env["FUNCTIONS_NETWORK"] == runtimes["name"] == "appwrite-runtimes"
        host = env["FUNCTIONS_API_ENDPOINT"].split("//")[1].split(":")[0]
        assert host == "api" and host in env["ALLOWED_HOSTS"].split(",")
    for name, service in SERVICES.items():
        if name not in ("api", "worker"):
            assert "FUNCTIONS_EXECUTOR" not in service.get("environment", {}), name
            assert not any("docker.sock" in str(v) for v in service.get("volumes", [])), name
            assert "runtimes" not in service.get("networks", ["backend"]), name
    assert runtimes["driver_opts"] == COMPOSE["networks"]["backend"]["driver_opts"] == {"isolate": "true"}
    podman = interpolate(yaml.safe_load(RAW), {**ENV_EXAMPLE, "FUNCTIONS_ENGINE_SOCKET": "/run/podman/podman.sock",
                                               "FUNCTIONS_ENGINE_GID": "998", "FUNCTIONS_NETWORK": "fn"})
    assert "/run/podman/podman.sock:/var/run/docker.sock" in podman["services"]["worker"]["volumes"]
    assert podman["services"]["api"]["group_add"] == ["998"]
    assert podman["networks"]["runtimes"]["name"] == podman["services"]["api"]["environment"]["FUNCTIONS_NETWORK"] == "fn"


def test_lb_renders_the_repo_template():
    lb = SERVICES["lb"]
    assert "./deploy/nginx/templates:/etc/nginx/templates:ro" in lb["volumes"]
    env = lb["environment"]
    used = compose_vars(NGINX_TEMPLATE.read_text())
    templated = {v for v in used if re.search(env["NGINX_ENVSUBST_FILTER"], v)}
    assert templated == {"API_HOST", "API_PORT", "LB_PORT", "LB_RESOLVER", "LB_RESOLVER_VALID", "LB_MAX_BODY",
                         "LB_CLIENT_HEADER_TIMEOUT", "LB_CLIENT_BODY_TIMEOUT", "LB_KEEPALIVE_TIMEOUT"}
    assert templated <= set(env)
    assert env["API_HOST"] == "api" and env["LB_RESOLVER"] == "127.0.0.11"  # Docker's embedded DNS
    # Podman's DNS answers on the network's gateway instead: the resolver can be set in .env.
    podman = interpolate(yaml.safe_load(RAW), {**ENV_EXAMPLE, "LB_RESOLVER": "172.30.0.1"})["services"]["lb"]
    assert podman["environment"]["LB_RESOLVER"] == "172.30.0.1"
    # nginx's cap equals the app's (see the template): larger would turn the app's 413 into a 502.
    assert env["LB_MAX_BODY"] == SERVICES["api"]["environment"]["MAX_REQUEST_BODY"] == "5505024"
    assert lb["ports"] == ["8080:8080"]


def test_k6_takes_the_script_name_from_env():
    raw = yaml.safe_load(RAW)["services"]["k6"]
    assert "${K6_SCRIPT" in " ".join(raw["command"])
    assert interpolate(raw["command"], {"K6_SCRIPT": "crud.js"}) == ["run", "/scripts/crud.js"]


def test_env_example_ships_no_usable_secret():
    assert RAW_ENV_EXAMPLE["SECRET_KEY"] == "" and RAW_ENV_EXAMPLE["POSTGRES_PASSWORD"] == ""


def test_secrets_are_required_not_defaulted():
    for name in ("SECRET_KEY", "POSTGRES_PASSWORD"):
        assert re.search(r"\$\{" + name + r":\?", RAW), name
        with pytest.raises(ValueError, match=name):
            interpolate(yaml.safe_load(RAW), {k: v for k, v in ENV_EXAMPLE.items() if k != name})


def test_trusted_proxies_is_the_compose_network():
    subnet = COMPOSE["networks"]["backend"]["ipam"]["config"][0]["subnet"]
    for name in APP_SERVICES:
        assert SERVICES[name]["environment"]["TRUSTED_PROXIES"] == subnet


def test_app_env_names_are_settings():
    names = settings_env_names()
    for name in APP_SERVICES:
        unknown = set(SERVICES[name]["environment"]) - names
        assert not unknown, f"{name}: {unknown} are not read by backend/settings/"


@pytest.mark.parametrize("name", APP_SERVICES)
def test_app_environment_loads_production_settings(name):
    env = {k: str(v) for k, v in SERVICES[name]["environment"].items()}
    assert env["APP_ENV"] == "production"
    for required in ("SECRET_KEY", "ALLOWED_HOSTS", "PUBLIC_URL", "DATABASE_URL", "REDIS_URL", "TRUSTED_PROXIES"):
        assert env.get(required), required
    code = ("import django; from django.conf import settings; django.setup(); "
            "assert settings.PRODUCTION and not settings.DEBUG; print(settings.DATABASES['default']['HOST'])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(env, DJANGO_SETTINGS_MODULE="backend.settings", PATH="/usr/bin:/bin"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "postgres"
    if name == "worker":
        # The worker command exists and its settings (mail, queue) load in production mode.
        code = ("import django; from django.conf import settings; django.setup(); "
                "from django.core.management import get_commands; assert 'worker' in get_commands(); "
                "print(settings.MAILERS['default']['OPTIONS']['host'], settings.MAIL_ENABLED)")
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                             env=dict(env, DJANGO_SETTINGS_MODULE="backend.settings", PATH="/usr/bin:/bin"))
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["mail", "True"]
    elif name != "migrate":
        mode = "wsgi" if name == "baseline" else "asgi"
        line = subprocess.run([sys.executable, "-m", "backend.serve", mode, "--print"], cwd=ROOT, text=True,
                              capture_output=True, env=dict(env, PATH="/usr/bin:/bin"), timeout=60).stdout
        assert "0.0.0.0" in line and "8000" in line
        assert ("gunicorn" if name == "baseline" else "uvicorn") in line


def test_env_example_lists_every_compose_variable():
    missing = compose_vars(RAW) - set(ENV_EXAMPLE)
    assert not missing, missing
    unknown = set(ENV_EXAMPLE) - compose_vars(RAW) - settings_env_names()
    assert not unknown, f".env.example names {unknown}, used nowhere"


def test_docs_document_every_setting():
    """Every environment variable is explained on a page written for readers (the generated
    docs/settings.md does not count: it lists every variable by construction)."""
    pages = "".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "settings.md")
    missing = {n for n in settings_env_names() if f"`{n}`" not in pages}
    assert not missing, missing


def test_dockerfile():
    """Every stage starts from the one Debian base (DEBIAN_IMAGE, default debian:trixie-slim) and
    takes Python 3.13 and Node.js from Debian's packages, so deploy/verify-compose.sh can build the
    same Dockerfile from Debian's archive alone."""
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG DEBIAN_IMAGE=debian:trixie-slim$", text, flags=re.M)
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    assert len(stages) == 3 and all(s.startswith("${DEBIAN_IMAGE}") for s in stages)
    build, icons, final = stages
    # The Avatars icon sets are installed from their lockfile in a node stage; only files move on.
    assert "nodejs npm" in icons and "npm ci --ignore-scripts" in icons
    assert "COPY --from=icons /icons/node_modules /app/apps/avatars/assets/node_modules" in final
    assert "build-essential" in build and "build-essential" not in final
    assert "python3.13 -m venv /opt/venv" in build and "python3.13" in final
    assert "pip install -r /tmp/requirements.txt" in build
    assert "COPY --from=build /opt/venv /opt/venv" in final
    assert re.search(r"^USER app$", final, flags=re.M) and "useradd" in final
    assert "collectstatic --noinput" in final
    assert 'CMD ["python", "-m", "backend.serve"]' in final
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", ".env", "artifacts", "tests", "conftest.py", "requirements-dev.txt"} <= set(ignored)


def test_requirements_are_pinned():
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][\w.]*", line.strip()), line


@pytest.mark.parametrize("public_url, issues", [
    ("https://api.example.com", []),
    # A plain-http public address: Django's reminder that nothing redirects to https is real.
    ("http://localhost:8080", ["security.W008"]),
])
def test_check_deploy_on_the_compose_configuration(public_url, issues):
    """``manage.py check --deploy`` with the api service's environment (from .env.example): no
    issue behind TLS; only W008 for a plain-http deployment. The silenced checks (HSTS for
    subdomains, preload list) are operator choices with their own settings."""
    env = {k: str(v) for k, v in SERVICES["api"]["environment"].items()}
    env.update(PUBLIC_URL=public_url, SECRET_KEY=secrets.token_urlsafe(64), DJANGO_SETTINGS_MODULE="backend.settings",
               PATH="/usr/bin:/bin")
    out = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env=env)
    found = re.findall(r"\((security\.[WE]\d+)\)", out.stdout + out.stderr)
    assert found == issues, out.stdout + out.stderr
