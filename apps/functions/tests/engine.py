"""A real container engine for the container tests: Podman's Docker-compatible service.

:func:`start_engine` starts ``podman system service`` on a socket of its own (runc and the
cgroupfs manager: crun and systemd cgroups fail on this kind of host; :func:`start_podman`, also
used by the load-test runner), builds the Debian base image when it is missing
(``deploy/debian-base.sh``, debootstrap; needs root) and the runtime images
(``apps.functions.images``: tagged by a hash of their recipe, so a rerun reuses them). It answers
``(engine, None)`` or ``(None, reason)`` when this machine cannot run containers; the tests then
skip with that reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONTAINERS_CONF = """[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


@dataclass
class Engine:
    socket: str
    proc: subprocess.Popen
    workdir: str
    env: dict[str, str]  # CONTAINERS_CONF for podman commands

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_engine() -> tuple[Engine | None, str | None]:
    engine, reason = start_podman()
    if engine is None:
        return None, reason
    try:
        _build_images(engine.url)
    except Exception as exc:  # noqa: BLE001 - any build failure is a reason to skip, said once
        engine.stop()
        return None, f"the runtime images could not be built: {exc}"
    return engine, None


def start_podman() -> tuple[Engine | None, str | None]:
    """Podman's service on a socket of its own, with the Debian base image built when missing;
    no runtime images (the load-test runner uses this without Django: its servers build them on
    first use)."""
    if shutil.which("podman") is None:
        return None, "podman is not installed (apt-get install podman runc)"
    workdir = tempfile.mkdtemp(prefix="fn-engine-")
    conf = os.path.join(workdir, "containers.conf")
    with open(conf, "w") as f:
        f.write(CONTAINERS_CONF)
    env = {**os.environ, "CONTAINERS_CONF": conf}
    probe = subprocess.run(["podman", "ps"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        shutil.rmtree(workdir, ignore_errors=True)
        return None, f"podman does not run here: {probe.stderr.strip()[-200:]}"
    base = subprocess.run([str(ROOT / "deploy" / "debian-base.sh")], env=env, capture_output=True, text=True)
    if base.returncode != 0:
        shutil.rmtree(workdir, ignore_errors=True)
        return None, f"the Debian base image could not be built: {(base.stdout + base.stderr).strip()[-300:]}"
    sock = os.path.join(workdir, "podman.sock")
    # cwd: conmon drops an "oom" marker file in its working directory when a container is OOM-killed.
    proc = subprocess.Popen(["podman", "system", "service", "--time=0", f"unix://{sock}"], env=env, cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not os.path.exists(sock):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            shutil.rmtree(workdir, ignore_errors=True)
            return None, "podman system service did not start"
        time.sleep(0.1)
    return Engine(sock, proc, workdir, env), None


def _build_images(url: str) -> None:
    import docker
    from django.conf import settings

    from apps.functions.images import ensure_all

    assert settings.FUNCTIONS_BASE_IMAGE
    client = docker.DockerClient(base_url=url, timeout=1800)
    try:
        ensure_all(client)
    finally:
        client.close()
