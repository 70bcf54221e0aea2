"""A throwaway PostgreSQL cluster for fault tests: its own data directory and port, so tests may
stop and restart it (never the shared server)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BINDIR = "/usr/lib/postgresql/15/bin"


class Cluster:
    """``initdb`` + ``postgres`` on a free port in a temp dir, run as the ``postgres`` user.

    ``url`` is the ``DATABASE_URL`` of its database ``app`` (migrated, with project ``p`` and an
    API key ``key`` holding every scope). :meth:`restart` is ``pg_ctl restart -m fast``.
    """

    def __init__(self, live_env: dict[str, str]):
        from conftest import free_port

        if not os.path.exists(f"{BINDIR}/initdb") or shutil.which("runuser") is None or os.geteuid() != 0:
            import pytest

            pytest.skip("needs PostgreSQL 15 binaries, and root to run them as the postgres user")
        self.root = Path(tempfile.mkdtemp(prefix="pgfault-"))  # pytest's tmp dirs are closed to postgres
        self.root.chmod(0o755)
        self.data = self.root / "pg"
        self.data.mkdir()
        shutil.chown(self.data, "postgres")
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/app"
        self._as_pg = ["runuser", "-u", "postgres", "--"]
        subprocess.run([*self._as_pg, f"{BINDIR}/initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres"],
                       check=True, capture_output=True)
        self.start()
        psql = ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c"]
        subprocess.run([*psql, "CREATE DATABASE app"], check=True, capture_output=True)
        from conftest import ROOT

        self.env = {**live_env, "DATABASE_URL": self.url}
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        self.key = subprocess.run([sys.executable, "-c", (
            "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'backend.settings'); django.setup()\n"
            "from apps.core.http.auth import KEY_SCOPES\nfrom apps.projects.services import api_key_create, project_create\n"
            "project_create(project_id='p', name='p', origins=[])\n"
            "print(api_key_create(project_id='p', name='k', scopes=sorted(KEY_SCOPES))[1])")],
            cwd=ROOT, env=self.env, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]

    def _ctl(self, *args: str) -> None:
        log = self.data / "server.log"
        subprocess.run([*self._as_pg, f"{BINDIR}/pg_ctl", "-D", str(self.data), "-l", str(log), "-w", "-t", "30",
                        *args], check=True, capture_output=True)

    def start(self) -> None:
        self._ctl("-o", f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1", "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "stop")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is terminated, the server is back when it returns."""
        self._ctl("-m", "fast", "-o", f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1", "restart")

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", str(self.port)],
                              capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("the throwaway PostgreSQL did not come back")

    def ensure_up(self) -> None:
        """Started again if a test stopped it (and failed before starting it); then ready."""
        if subprocess.run([*self._as_pg, f"{BINDIR}/pg_ctl", "-D", str(self.data), "status"],
                          capture_output=True).returncode != 0:
            self.start()
        self.wait_ready()

    def remove(self) -> None:
        try:
            self._ctl("-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
