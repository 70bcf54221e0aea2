"""What the function stages of ``--preset functions`` need (stages g and h, ``round2.FUNCTION_STAGES``).

:func:`setup`, once before the first function stage:

1. a container engine: ``--functions-engine``, else ``FUNCTIONS_DOCKER_HOST``, else a Podman
   service of the run's own (``apps/functions/tests/engine.start_podman``: runc, the cgroupfs
   manager, the Debian base image built when missing), stopped when the run ends;
2. every server of the run from then on gets ``FUNCTIONS_EXECUTOR=docker``, that engine, the
   runtime network :data:`NETWORK` and ``FUNCTIONS_ROOT`` in the run's temp folder;
3. the ``asgi`` build and a worker (queue ``functions``) start; through the API with the key:
   function :data:`FUNCTION_ID` (``python-3.13``, ``execute: any``), a deployment of
   :data:`CODE`, activated; the worker builds it (the first build on a machine also builds the
   runtime image, about a minute); one synchronous execution must answer ``ok``; both stop.

Between runs: every server stop is followed by :func:`remove_runtimes`, so no run starts with the
containers of the one before (a server removes its own at exit, but a gunicorn worker killed
after its graceful timeout leaves its containers behind).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import tarfile
import time

from loadtests.runner.bench import Bench, log
from loadtests.runner.builds import BUILDS, PY, ROOT
from loadtests.runner.seed import Client

FUNCTION_ID = "benchfn"  # scenarios/functions.js's default FUNCTION_ID
NETWORK = "appwrite-runtimes-bench"
CODE = 'def main(context):\n    return context.res.text("ok")\n'
LABEL = "appwrite.functions"  # apps/functions/executor/docker.py labels its containers so
BUILD_TIMEOUT = 900.0


def engine_url(bench: Bench) -> str:
    """The engine's API URL; starts a Podman service (stopped at the end of the run) if none is given."""
    url = bench.args.functions_engine or os.environ.get("FUNCTIONS_DOCKER_HOST", "")
    if url:
        return url
    from apps.functions.tests.engine import start_podman

    engine, reason = start_podman()
    if engine is None:
        raise SystemExit(f"--preset functions needs a container engine: {reason}; or pass --functions-engine URL")
    bench.cleanups.append(engine.stop)
    log(f"functions: podman service on {engine.url}")
    return engine.url


def setup(bench: Bench, key: str) -> None:
    url = engine_url(bench)
    bench.server_env.update({"FUNCTIONS_EXECUTOR": "docker", "FUNCTIONS_DOCKER_HOST": url,
                             "FUNCTIONS_NETWORK": NETWORK, "FUNCTIONS_ROOT": str(bench.work / "functions")})
    bench.cleanups.append(lambda: remove_runtimes(url, network=True))
    bench.after_stop.append(lambda: remove_runtimes(url))
    bench.stop_current()  # a server kept from an earlier stage (smoke) has not got the engine
    server = bench.start(BUILDS["asgi"], "functions-seed")
    worker = subprocess.Popen([PY, "manage.py", "worker", "--queues", "functions"], cwd=ROOT,
                              env={**os.environ, **bench.server_env},
                              stdout=(bench.work / "worker-functions.log").open("wb"), stderr=subprocess.STDOUT)
    try:
        seed_function(Client(server.url, bench.args.project, key), worker)
    finally:
        _stop(worker)
        server.stop()
        bench.stopped()


def targz(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def seed_function(client: Client, worker: subprocess.Popen) -> None:
    """The function, a deployment built and activated, and one execution that answers ``ok``."""
    c = client.call
    r = c("POST", "/functions", json={"functionId": FUNCTION_ID, "name": "Load tests", "runtime": "python-3.13",
                                      "execute": ["any"], "timeout": 15})
    if r.status_code not in (201, 409):
        raise RuntimeError(f"POST /functions: {r.status_code} {r.text[:300]}")
    r = c("POST", f"/functions/{FUNCTION_ID}/deployments", data={"activate": "true"},
          files={"code": ("code.tar.gz", targz({"main.py": CODE}), "application/gzip")})
    if r.status_code != 202:
        raise RuntimeError(f"POST /functions/{FUNCTION_ID}/deployments: {r.status_code} {r.text[:300]}")
    deployment = r.json()["$id"]
    started = time.monotonic()
    log(f"functions: waiting for the build of deployment {deployment} (the first on a machine also builds "
        "the runtime image)")
    while True:
        d = c("GET", f"/functions/{FUNCTION_ID}/deployments/{deployment}").json()
        if d.get("status") in ("ready", "failed"):
            break
        if worker.poll() is not None:
            raise RuntimeError(f"the functions worker exited ({worker.returncode}) before the build finished")
        if time.monotonic() - started > BUILD_TIMEOUT:
            raise RuntimeError(f"the build did not finish within {BUILD_TIMEOUT:.0f} s: {d.get('status')}")
        time.sleep(1)
    if d["status"] != "ready":
        raise RuntimeError(f"the function's build failed:\n{str(d.get('buildLogs', ''))[-2000:]}")
    x = c("POST", f"/functions/{FUNCTION_ID}/executions", json={"body": "ping", "async": False})
    if x.status_code != 201 or x.json().get("responseBody") != "ok":
        raise RuntimeError(f"the seeded function does not answer: {x.status_code} {x.text[:500]}")
    log(f"functions: {FUNCTION_ID} built in {time.monotonic() - started:.0f} s; first execution (a cold start) "
        f"took {x.json()['duration'] * 1000:.0f} ms")


def remove_runtimes(url: str, network: bool = False) -> None:
    """Remove the runtime containers on :data:`NETWORK` (only those: the engine may serve other
    deployments); with ``network``, the network too (at the end of the run)."""
    import docker

    client = docker.DockerClient(base_url=url, timeout=120)
    try:
        for container in client.containers.list(all=True, filters={"label": LABEL}):
            if NETWORK in (container.attrs.get("NetworkSettings", {}).get("Networks") or {}):
                try:
                    container.remove(force=True, v=True)
                except docker.errors.APIError:
                    pass
        if network:
            try:
                client.networks.get(NETWORK).remove()
            except docker.errors.APIError:
                pass
    finally:
        client.close()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
