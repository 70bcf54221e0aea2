"""The production executor: containers through the Docker Engine API (``docker`` package).

Works with Docker and with Podman's compatible service (``podman system service``).

* **Build:** a one-off container of the runtime image gets the deployment's source in
  ``/usr/local/build``, runs the recipe's ``build.sh`` (the function's commands, else
  ``requirements.txt`` / ``package.json`` installs from PyPI / npm), and the directory is copied
  out as the build output.
* **Execute:** a runtime container gets the build output in ``/usr/local/server/src/build`` and
  serves executions on port 3000 (``apps/functions/runtimes/*/server``). Containers are kept
  warm per (deployment, environment) for ``FUNCTIONS_WARM_SECONDS`` and reused one execution at a
  time; none idle means a cold start.
* **Isolation and limits:** containers join ``FUNCTIONS_NETWORK`` (a bridge network, never the
  host's namespace), run as an unprivileged user with every capability dropped and
  ``no-new-privileges``, with the specification's memory (no extra swap) and CPU limits and a
  process limit. Their environment is the function's variables and ``APPWRITE_FUNCTION_*`` only:
  nothing of the server's own environment. An execution that outlives its timeout has its
  container killed and removed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import socket
import threading
import time
import urllib.error
import urllib.request
from base64 import b64decode, b64encode
from dataclasses import dataclass

from django.conf import settings

from apps.functions.executor import BuildResult, Executor, Request, Result, Target
from apps.functions.images import ensure_image

log = logging.getLogger("apps.functions")
LABEL = "appwrite.functions"
PIDS_LIMIT = 512


@dataclass(slots=True)
class Warm:
    container_id: str
    address: str
    secret: str
    last_used: float


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class DockerExecutor(Executor):
    def __init__(self):
        import docker

        self._docker = docker
        base_url = settings.FUNCTIONS_DOCKER_HOST
        self.client = (docker.DockerClient(base_url=base_url, timeout=300) if base_url
                       else docker.from_env(timeout=300))
        self._lock = threading.Lock()
        self._idle: dict[str, list[Warm]] = {}
        self._network_ready = False
        self._remove_orphans()

    # --- plumbing ----------------------------------------------------------------------------
    def _network(self) -> str:
        name = settings.FUNCTIONS_NETWORK
        if not self._network_ready:
            try:
                self.client.networks.get(name)
            except self._docker.errors.NotFound:
                try:
                    self.client.networks.create(name, driver="bridge", labels={LABEL: "network"})
                except self._docker.errors.APIError:  # created meanwhile by another process
                    self.client.networks.get(name)
            self._network_ready = True
        return name

    def _limits(self, cpus: float, memory: int) -> dict:
        return {"mem_limit": f"{memory}m", "memswap_limit": f"{memory}m", "nano_cpus": int(cpus * 1e9),
                "pids_limit": PIDS_LIMIT, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"],
                "network": self._network()}

    def _remove(self, container_id: str) -> None:
        try:
            self.client.api.remove_container(container_id, force=True, v=True)
        except self._docker.errors.APIError:
            pass

    def _remove_orphans(self) -> None:
        """Remove runtime containers left by dead processes of this host (a crash or kill)."""
        host = socket.gethostname()
        try:
            found = self.client.containers.list(all=True, filters={"label": LABEL})
        except self._docker.errors.APIError:
            return
        for container in found:
            owner = container.labels.get(f"{LABEL}.owner", "")
            name, _, pid = owner.partition(":")
            if name == host and pid.isdigit() and not pid_alive(int(pid)):
                self._remove(container.id)

    # --- build -------------------------------------------------------------------------------
    def build(self, *, deployment_id, runtime, source, commands, output, cpus, memory, timeout) -> BuildResult:
        started = time.monotonic()
        image = ensure_image(self.client, runtime)
        container = self.client.containers.create(
            image, command=["sh", "/usr/local/server/build.sh"], working_dir="/usr/local/build",
            environment={"OPEN_RUNTIMES_BUILD_COMMAND": commands or ""},
            labels={LABEL: "build", f"{LABEL}.owner": _owner(), f"{LABEL}.deployment": str(deployment_id)},
            **self._limits(cpus, memory))
        try:
            container.put_archive("/usr/local/build", source)
            container.start()
            try:
                code = container.wait(timeout=timeout).get("StatusCode", 1)
            except Exception:  # noqa: BLE001 - requests' ReadTimeout / ConnectionError: the build ran too long
                container.kill()
                logs = container.logs().decode("utf-8", "replace")
                return BuildResult(False, f"{logs}\nBuild timed out after {timeout} seconds.",
                                   duration=time.monotonic() - started)
            logs = container.logs().decode("utf-8", "replace")
            if code != 0:
                return BuildResult(False, f"{logs}\nBuild failed with exit code {code}.",
                                   duration=time.monotonic() - started)
            stream, _ = container.get_archive("/usr/local/build")
            os.makedirs(os.path.dirname(output), exist_ok=True)
            with open(output + ".tmp", "wb") as out:
                for piece in stream:
                    out.write(piece)
            os.replace(output + ".tmp", output)
            return BuildResult(True, logs, output=output, size=os.path.getsize(output),
                               duration=time.monotonic() - started)
        finally:
            self._remove(container.id)

    # --- execute -----------------------------------------------------------------------------
    def _key(self, target: Target) -> str:
        blob = json.dumps([target.deployment_id, target.runtime, target.entrypoint, target.env, target.cpus,
                           target.memory], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def _take(self, key: str) -> Warm | None:
        with self._lock:
            idle = self._idle.get(key) or []
            return idle.pop() if idle else None

    def _give_back(self, key: str, warm: Warm) -> None:
        warm.last_used = time.monotonic()
        with self._lock:
            self._idle.setdefault(key, []).append(warm)

    def _reap(self) -> None:
        """Remove containers idle for longer than ``FUNCTIONS_WARM_SECONDS``."""
        limit = time.monotonic() - settings.FUNCTIONS_WARM_SECONDS
        stale = []
        with self._lock:
            for key, idle in self._idle.items():
                stale += [w for w in idle if w.last_used < limit]
                self._idle[key] = [w for w in idle if w.last_used >= limit]
        for warm in stale:
            self._remove(warm.container_id)

    def _start(self, target: Target, key: str) -> Warm:
        """A cold start: create the container, copy the code in, start it, wait for its server."""
        image = ensure_image(self.client, target.runtime)
        secret = secrets.token_urlsafe(32)
        env = {**target.env, "OPEN_RUNTIMES_SECRET": secret, "OPEN_RUNTIMES_ENTRYPOINT": target.entrypoint}
        container = self.client.containers.create(
            image, environment=env, labels={LABEL: "runtime", f"{LABEL}.owner": _owner(), f"{LABEL}.key": key,
                                            f"{LABEL}.deployment": str(target.deployment_id)},
            **self._limits(target.cpus, target.memory))
        try:
            with open(target.build_path, "rb") as f:
                container.put_archive("/usr/local/server/src", f.read())
            container.start()
            container.reload()
            networks = container.attrs["NetworkSettings"]["Networks"]
            address = (networks.get(settings.FUNCTIONS_NETWORK) or next(iter(networks.values())))["IPAddress"]
            deadline = time.monotonic() + settings.FUNCTIONS_START_TIMEOUT
            while True:
                try:
                    with urllib.request.urlopen(f"http://{address}:3000/", timeout=1):
                        break
                except (OSError, urllib.error.URLError):
                    if time.monotonic() > deadline:
                        raise TimeoutError("the runtime server did not start") from None
                    time.sleep(0.05)
        except BaseException:
            self._remove(container.id)
            raise
        return Warm(container.id, address, secret, time.monotonic())

    def execute(self, target: Target, request: Request) -> Result:
        self._reap()
        started = time.monotonic()
        key = self._key(target)
        warm = self._take(key)
        if warm is None:
            try:
                warm = self._start(target, key)
            except Exception as exc:  # noqa: BLE001 - the engine's or the start's error, recorded
                log.warning("runtime start failed for deployment %s: %s", target.deployment_id, exc)
                return Result(500, {}, b"", "", f"The runtime could not start: {exc}",
                              time.monotonic() - started, failed=True)
        payload = json.dumps({"method": request.method, "path": request.path, "headers": request.headers,
                              "body": b64encode(request.body).decode(), "env": request.env}).encode()
        call = urllib.request.Request(f"http://{warm.address}:3000/", data=payload, method="POST",
                                      headers={"content-type": "application/json",
                                               "x-open-runtimes-secret": warm.secret})
        try:
            with urllib.request.urlopen(call, timeout=target.timeout) as response:
                answer = json.loads(response.read())
        except TimeoutError:
            self._remove(warm.container_id)
            return Result(500, {}, b"", "", f"Execution timed out after {target.timeout} seconds.",
                          time.monotonic() - started, failed=True)
        except (OSError, urllib.error.URLError, ValueError) as exc:
            reason = self._exit_reason(warm.container_id) or str(exc)
            self._remove(warm.container_id)
            return Result(500, {}, b"", "", f"The runtime stopped during the execution: {reason}",
                          time.monotonic() - started, failed=True)
        self._give_back(key, warm)
        return Result(int(answer["statusCode"]), dict(answer.get("headers") or {}), b64decode(answer["body"]),
                      answer.get("logs", ""), answer.get("errors", ""), time.monotonic() - started)

    def _exit_reason(self, container_id: str) -> str:
        """Why a container stopped serving: out of memory, or its exit code (waits up to 2 s
        for the engine to see it stop)."""
        for _ in range(20):
            try:
                state = self.client.api.inspect_container(container_id)["State"]
            except self._docker.errors.APIError:
                return ""
            if not state.get("Running"):
                break
            time.sleep(0.1)
        if state.get("OOMKilled"):
            return "out of memory (the specification's memory limit)"
        if not state.get("Running"):
            code = state.get("ExitCode")
            if code == 137:  # SIGKILL: the kernel's OOM killer (cgroup v1 engines do not flag it)
                return "killed (exit code 137), most likely over the specification's memory limit"
            return f"exit code {code}"
        return ""

    def forget(self, deployment_ids: list[int]) -> None:
        wanted = {str(d) for d in deployment_ids}
        try:
            found = self.client.containers.list(all=True, filters={"label": LABEL})
        except self._docker.errors.APIError:
            return
        gone = set()
        for container in found:
            if container.labels.get(f"{LABEL}.deployment") in wanted:
                self._remove(container.id)
                gone.add(container.id)
        with self._lock:
            for key, idle in self._idle.items():
                self._idle[key] = [w for w in idle if w.container_id not in gone]

    def close(self) -> None:
        """Remove this process's warm containers (at shutdown)."""
        with self._lock:
            idle = [w for ws in self._idle.values() for w in ws]
            self._idle.clear()
        for warm in idle:
            self._remove(warm.container_id)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (signal 0; one we may not signal runs too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
