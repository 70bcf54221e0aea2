"""Helpers for the deployment tests: processes on chosen addresses, a tiny DNS server, nginx.

Without a Docker engine the compose services are proven by running their commands directly:
server processes bind loopback addresses (127.0.0.2, 127.0.0.3, ...) the way replicas get their
own container addresses, and :class:`FakeDNS` answers for a service name with several A records
the way Docker's embedded DNS does for a scaled service.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
NGINX_TEMPLATE = ROOT / "deploy" / "nginx" / "templates" / "default.conf.template"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass
class Proc:
    """A started process; ``url`` is ``http://host:port`` when it serves HTTP."""

    name: str
    proc: subprocess.Popen
    log: Path
    url: str = ""

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 15) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start(name: str, cmd: list[str], env: dict[str, str], ready_url: str | None = None, wait: float = 40) -> Proc:
    """Start ``cmd`` with output in ``artifacts/<name>.log``; wait until ``ready_url`` answers 200."""
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / f"{name}.log"
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    p = Proc(name, proc, log)
    if ready_url is None:
        return p
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited early ({proc.returncode}):\n{p.text()[-3000:]}")
        try:
            if requests.get(ready_url, timeout=1).status_code == 200:
                return p
        except requests.RequestException:
            pass
        time.sleep(0.1)
    p.stop()
    raise RuntimeError(f"{name} did not become ready:\n{p.text()[-3000:]}")


def envsubst(text: str, values: dict[str, str], pattern: str = r"^(API|LB)_") -> str:
    """Render like the nginx image's template step: ``envsubst`` limited to variables that are
    defined and match ``NGINX_ENVSUBST_FILTER``; every other ``$name`` is left for nginx."""

    def sub(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        if name in values and re.search(pattern, name):
            return values[name]
        return match.group(0)

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, text)


class FakeDNS:
    """A UDP DNS server on 127.0.0.1 answering A queries from ``records`` (name -> [IPv4])."""

    def __init__(self, records: dict[str, list[str]], ttl: int = 1):
        self.records = records
        self.ttl = ttl
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _answer(self, query: bytes) -> bytes:
        qid, flags = struct.unpack("!HH", query[:4])
        pos, labels = 12, []
        while query[pos]:
            n = query[pos]
            labels.append(query[pos + 1:pos + 1 + n].decode())
            pos += n + 1
        qtype = struct.unpack("!H", query[pos + 1:pos + 3])[0]
        question = query[12:pos + 5]
        name = ".".join(labels).lower()
        addrs = self.records.get(name) if qtype == 1 else None
        rd = flags & 0x0100
        if name not in self.records:
            header = struct.pack("!HHHHHH", qid, 0x8083 | rd, 1, 0, 0, 0)  # NXDOMAIN
            return header + question
        addrs = addrs or []
        header = struct.pack("!HHHHHH", qid, 0x8080 | rd, 1, len(addrs), 0, 0)
        answers = b"".join(
            struct.pack("!HHHIH", 0xC00C, 1, 1, self.ttl, 4) + socket.inet_aton(a) for a in addrs
        )
        return header + question + answers

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                self.sock.sendto(self._answer(data), peer)
            except Exception:  # a query this small server doesn't understand: no answer
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def check_nginx(workdir: Path, values: dict[str, str], server_extra: str = "") -> Path:
    """Render the repo's template from ``values`` under ``workdir``, run ``nginx -t`` on it, and
    return the main config file. ``server_extra`` (directives) is added to the server block after
    its ``listen`` line, as an operator adds ``listen 443 ssl`` and a certificate for TLS.

    The wrapper below plays the part of the nginx image's own ``nginx.conf``: main context,
    ``events``, and an ``http`` block that includes the rendered file.
    """
    conf_d = workdir / "conf.d"
    conf_d.mkdir(parents=True, exist_ok=True)
    rendered = envsubst(NGINX_TEMPLATE.read_text(), values)
    if server_extra:
        listen = f"    listen {values['LB_PORT']};\n"
        assert listen in rendered
        rendered = rendered.replace(listen, listen + server_extra, 1)
    (conf_d / "default.conf").write_text(rendered)
    temp = workdir / "temp"
    temp.mkdir(exist_ok=True)
    main = workdir / "nginx.conf"
    main.write_text(
        # As root, workers would run as "nobody" and could not use the private temp folder.
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"daemon off;\nworker_processes 1;\npid {workdir}/nginx.pid;\nerror_log {workdir}/error.log info;\n"
        "events { worker_connections 512; }\n"
        "http {\n"
        f"  client_body_temp_path {temp}/body;\n  proxy_temp_path {temp}/proxy;\n"
        f"  fastcgi_temp_path {temp}/fastcgi;\n  uwsgi_temp_path {temp}/uwsgi;\n  scgi_temp_path {temp}/scgi;\n"
        f"  include {conf_d}/*.conf;\n"
        "}\n"
    )
    check = subprocess.run([NGINX, "-t", "-c", str(main), "-e", str(workdir / "error.log")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    return main


def start_nginx(name: str, workdir: Path, values: dict[str, str], server_extra: str = "") -> Proc:
    """Run Debian's nginx with the repo's template rendered from ``values`` (see check_nginx)."""
    main = check_nginx(workdir, values, server_extra)
    url = f"http://127.0.0.1:{values['LB_PORT']}"
    p = start(name, [NGINX, "-c", str(main), "-e", str(workdir / "error.log")], env={"PATH": "/usr/sbin:/usr/bin"},
              ready_url=url + "/lb-health", wait=10)
    p.url = url
    return p
