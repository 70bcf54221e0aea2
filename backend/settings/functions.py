"""Functions: the container engine that runs user code, limits per execution, code storage."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import _env, _env_int
from backend.settings.storage import STORAGE_ROOT

# --- Functions (apps.functions; docs/functions.md) -----------------------------------------------
# The container engine that builds and runs functions: "docker" (the Docker Engine API, also
# Podman's `podman system service`) or "" (none: executions answer 503 saying what to set up;
# functions and deployments can still be managed).
FUNCTIONS_EXECUTOR = _env("FUNCTIONS_EXECUTOR", "").lower()
if FUNCTIONS_EXECUTOR not in {"", "docker"}:
    raise ImproperlyConfigured(f"FUNCTIONS_EXECUTOR must be 'docker' or empty, got {FUNCTIONS_EXECUTOR!r}")
# The engine's API address (unix:///var/run/docker.sock, tcp://host:2375); empty = the docker
# package's own default (DOCKER_HOST from the environment, else /var/run/docker.sock).
FUNCTIONS_DOCKER_HOST = _env("FUNCTIONS_DOCKER_HOST", "")
# The network runtime containers join (created as a bridge network when missing): never the
# host's network namespace. Functions reach the API through FUNCTIONS_API_ENDPOINT.
FUNCTIONS_NETWORK = _env("FUNCTIONS_NETWORK", "appwrite-runtimes")
# The API's /v1 address as seen from inside a runtime container (APPWRITE_FUNCTION_API_ENDPOINT).
FUNCTIONS_API_ENDPOINT = _env("FUNCTIONS_API_ENDPOINT", "http://host.containers.internal/v1")
# The image runtime images are built on (deploy/debian-base.sh builds it from Debian's archive).
FUNCTIONS_BASE_IMAGE = _env("FUNCTIONS_BASE_IMAGE", "localhost/debian:trixie-slim")
# Deployment archives and build outputs (a directory every API process and worker shares).
FUNCTIONS_ROOT = _env("FUNCTIONS_ROOT", str(Path(STORAGE_ROOT) / ".functions"))
FUNCTIONS_MAX_TIMEOUT = _env_int("FUNCTIONS_MAX_TIMEOUT", 900, minimum=1)  # seconds: cap on a function's timeout
FUNCTIONS_SIZE_LIMIT = _env_int("FUNCTIONS_SIZE_LIMIT", 30000000, minimum=1)  # bytes: largest code archive
FUNCTIONS_BUILD_TIMEOUT = _env_int("FUNCTIONS_BUILD_TIMEOUT", 900, minimum=1)  # seconds a build may run
# Synchronous executions wait at most this long (Appwrite: 30 s), longer ones must be async.
FUNCTIONS_SYNC_TIMEOUT = _env_int("FUNCTIONS_SYNC_TIMEOUT", 30, minimum=1)
# Seconds an idle warm container is kept for the next execution of its deployment.
FUNCTIONS_WARM_SECONDS = _env_int("FUNCTIONS_WARM_SECONDS", 600, minimum=0)
# Seconds a cold container may take to start its runtime server.
FUNCTIONS_START_TIMEOUT = _env_int("FUNCTIONS_START_TIMEOUT", 30, minimum=1)
# Dynamic API keys of executions live this many seconds past the function's timeout.
FUNCTIONS_KEY_GRACE = _env_int("FUNCTIONS_KEY_GRACE", 60, minimum=0)
# Seconds past its function's timeout after which an execution still "processing" is failed by
# the worker (its process stopped); those of a dead process of the worker's own host fail at once.
FUNCTIONS_EXECUTION_GRACE = _env_int("FUNCTIONS_EXECUTION_GRACE", 300, minimum=1)
# Where template deployments come from: {base}/{owner}/{repository}/archive/refs/heads/{branch}.tar.gz
# (refs/tags/{tag}, or {commit}.tar.gz), GitHub's archive URLs; another base must serve the same shape.
FUNCTIONS_TEMPLATE_SOURCE = _env("FUNCTIONS_TEMPLATE_SOURCE", "https://github.com")
# Seconds a template's archive download may take (the worker fails the deployment after that).
FUNCTIONS_TEMPLATE_TIMEOUT = _env_int("FUNCTIONS_TEMPLATE_TIMEOUT", 60, minimum=1)
