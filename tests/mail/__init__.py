"""Test fixtures for mail: a real SMTP server process and the background worker process.

* :func:`start_smtp_server` runs ``python -m tests.mail.smtp_server`` (aiosmtpd) on a free port;
  every accepted message is written as a ``.eml`` file into its folder, and
  :class:`SmtpServer` reads them back (``wait_for(to=...)``, ``link``, ``code``). With
  ``refuse=True`` it answers every recipient with ``550`` (a server that refuses mail).
* :func:`start_worker` runs ``manage.py worker`` against a live server's database and the given
  SMTP server (``stop()``, ``kill()``, ``restart()``).

``conftest.py`` wraps both as session fixtures (``smtp_server``, ``mail_worker``); any test may use
them, e.g. a browser test that reads the link a mail carries.
"""

from __future__ import annotations

import email
import email.policy
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
_URL = re.compile(r"https?://[^\s<>\"']+")


@dataclass
class SmtpServer:
    """A running SMTP server process: ``host``/``port`` to send to, ``maildir`` where it stores
    what it accepted."""

    host: str
    port: int
    maildir: Path
    proc: subprocess.Popen
    log: Path

    @property
    def env(self) -> dict[str, str]:
        """The settings that make a server or worker send through this server."""
        return {"SMTP_HOST": self.host, "SMTP_PORT": str(self.port), "SMTP_SECURE": ""}

    def messages(self) -> list[EmailMessage]:
        """Every message received so far, oldest first."""
        out = []
        for path in sorted(self.maildir.glob("*.eml"), key=lambda p: int(p.stem)):
            out.append(email.message_from_bytes(path.read_bytes(), policy=email.policy.default))
        return out

    def wait_for(self, *, to: str, count: int = 1, timeout: float = 30.0, subject: str = "") -> list[EmailMessage]:
        """The first ``count`` messages to ``to`` (and whose subject contains ``subject``); waits
        up to ``timeout`` seconds for them. Raises ``AssertionError`` naming what arrived."""
        deadline = time.monotonic() + timeout
        while True:
            found = [m for m in self.messages() if to.lower() in str(m["To"]).lower() and subject in str(m["Subject"])]
            if len(found) >= count:
                return found[:count]
            if time.monotonic() > deadline:
                seen = [(str(m["To"]), str(m["Subject"])) for m in self.messages()][-10:]
                raise AssertionError(f"no {count} mail(s) to {to} within {timeout}s; last received: {seen}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def text_of(message: EmailMessage) -> str:
    """The plain-text part of a message."""
    return message.get_body(preferencelist=("plain",)).get_content()


def html_of(message: EmailMessage) -> str:
    """The HTML part of a message."""
    return message.get_body(preferencelist=("html",)).get_content()


def link_in(message: EmailMessage) -> str:
    """The first http(s) URL in the plain-text part."""
    found = _URL.search(text_of(message))
    assert found, text_of(message)
    return found.group(0)


def code_in(message: EmailMessage, digits: int = 6) -> str:
    """The first run of exactly ``digits`` digits in the plain-text part."""
    found = re.search(rf"(?<!\d)\d{{{digits}}}(?!\d)", text_of(message))
    assert found, text_of(message)
    return found.group(0)


def start_smtp_server(maildir: Path, *, port: int | None = None, refuse: bool = False,
                      log: Path | None = None) -> SmtpServer:
    """Start the SMTP server process on ``127.0.0.1`` (a free port unless ``port``)."""
    from conftest import free_port

    port = port or free_port()
    maildir.mkdir(parents=True, exist_ok=True)
    log = log or maildir / "server.log"
    cmd = [sys.executable, "-m", "tests.mail.smtp_server", "--port", str(port), "--maildir", str(maildir)]
    if refuse:
        cmd.append("--refuse")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    server = SmtpServer("127.0.0.1", port, maildir, proc, log)
    deadline = time.monotonic() + 20
    import socket

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"SMTP server exited: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                if sock.recv(128).startswith(b"220"):
                    return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"SMTP server did not start: {log.read_text()[-2000:]}")


@dataclass
class WorkerProcess:
    """A ``manage.py worker`` process (see :func:`start_worker`)."""

    env: dict[str, str]
    log: Path
    args: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None

    def start(self) -> WorkerProcess:
        self.proc = subprocess.Popen([sys.executable, "manage.py", "worker", *self.args], cwd=ROOT, env=self.env,
                                     stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # started = its log says so (Django loaded, queue polled)
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log.read_text()[-3000:]}")
            if f"worker pid={self.proc.pid} " in self.log.read_text(errors="replace"):
                return self
            time.sleep(0.1)
        raise RuntimeError(f"worker did not start: {self.log.read_text()[-3000:]}")

    def stop(self, timeout: float = 30) -> int | None:
        """SIGTERM (finish the running task, then exit); returns the exit code."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def kill(self) -> None:
        """SIGKILL: the worker dies at once, mid-task if it was running one."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self) -> WorkerProcess:
        self.stop()
        return self.start()


def start_worker(env: dict[str, str], log: Path, *args: str) -> WorkerProcess:
    """Start ``manage.py worker`` with ``env`` (a live server's environment plus the SMTP
    settings); waits until it runs. ``args`` go to the command (e.g. ``--queues``, ``mails``)."""
    return WorkerProcess(env=env, log=log, args=list(args)).start()


def wait_until(predicate, timeout: float = 60.0, what: str = "condition", every: float = 0.05):
    """Poll ``predicate()`` until it returns something true (returned), at most ``timeout``
    seconds; raises ``AssertionError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")
