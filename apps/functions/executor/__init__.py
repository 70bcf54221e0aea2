"""The runtime layer: builds deployments and runs executions in containers.

:class:`Executor` is the interface the rest of the app uses; :func:`get_executor` answers the
configured one (``FUNCTIONS_EXECUTOR=docker``: :class:`~apps.functions.executor.docker.DockerExecutor`,
the Docker Engine API through the ``docker`` package, also Podman's compatible service) or
``None`` when no container engine is configured (executions then answer 503
``function_executor_unavailable``). Every method blocks; async callers use ``run_blocking``.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass, field

from django.conf import settings


@dataclass(slots=True)
class BuildResult:
    ok: bool
    logs: str
    output: str = ""  # path of the build output (a plain tar of the built code), when ok
    size: int = 0  # bytes of the output
    duration: float = 0.0  # seconds


@dataclass(slots=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    env: dict[str, str] = field(default_factory=dict)  # per execution (the dynamic API key...)


@dataclass(slots=True)
class Result:
    status_code: int
    headers: dict[str, str]
    body: bytes
    logs: str
    errors: str
    duration: float  # seconds, the runtime's part (cold start included)
    failed: bool = False  # timed out, crashed, or the runtime could not start


@dataclass(slots=True)
class Target:
    """What to run: the deployment (its row id and build output), its runtime and limits."""

    deployment_id: int
    runtime: str
    entrypoint: str
    build_path: str
    env: dict[str, str]
    cpus: float
    memory: int  # MB
    timeout: int  # seconds


class Executor:
    """The interface of a runtime layer (every method blocks)."""

    def build(self, *, deployment_id: int, runtime: str, source: bytes, commands: str, output: str,
              cpus: float, memory: int, timeout: int) -> BuildResult:  # pragma: no cover - interface
        raise NotImplementedError

    def execute(self, target: Target, request: Request) -> Result:  # pragma: no cover - interface
        raise NotImplementedError

    def forget(self, deployment_ids: list[int]) -> None:  # pragma: no cover - interface
        """Stop and remove the warm containers of these deployments."""
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - interface
        """Remove this process's warm containers (at exit)."""


_lock = threading.Lock()
_executor: Executor | None = None


def get_executor() -> Executor | None:
    """The configured executor (one per process), or ``None`` without a container engine."""
    global _executor
    if not settings.FUNCTIONS_EXECUTOR:
        return None
    with _lock:
        if _executor is None:
            from apps.functions.executor.docker import DockerExecutor

            _executor = DockerExecutor()
            atexit.register(_executor.close)  # this process's warm containers go with it
        return _executor
