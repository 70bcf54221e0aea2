"""Process launcher: ``python -m backend.serve [asgi|wsgi] [--print]``.

``asgi`` (the default) turns this process into ONE process of the ASGI server named by the
``ASGI_SERVER`` setting (uvicorn or daphne), serving ``backend.asgi:application`` in this
process. ``wsgi`` execs the gunicorn baseline (sync
workers) serving ``backend.wsgi:application``.
``--print`` writes the command instead of running it. Every value comes from ``backend.settings``
(the only reader of the environment), so a production start with a missing secret fails here,
before a port is opened.

What each server is asked for:

* bind ``BIND_HOST:PORT``; no in-process workers (scale out with more containers);
* graceful shutdown: on SIGTERM stop accepting, let in-flight requests finish for up to
  ``SERVER_GRACEFUL_TIMEOUT`` seconds, then run the ASGI lifespan shutdown, which closes the
  PostgreSQL and Redis pools (``apps.core.http.serving.asgi_app``);
* back-pressure: ``SERVER_LIMIT_CONCURRENCY`` and ``SERVER_BACKLOG``, so overload becomes fast 503s
  instead of an unbounded in-process queue;
* no proxy-header rewriting: the app itself believes ``X-Forwarded-For`` only from
  ``TRUSTED_PROXIES`` (``apps.core.http.clientip``).

Daphne has no lifespan protocol and no graceful drain of its own; ``ASGI_SERVER=daphne`` therefore
runs daphne in this process through :mod:`backend.serve_daphne`, which adds both.
"""

from __future__ import annotations

import os
import signal
import sys

ASGI_APP = "backend.asgi:application"
# The /v1 HTTP/1.1 protocol, which hands everything else to uvicorn's httptools protocol with the head
# limits and client timeouts (apps.core.http.serving.v1_protocol, apps.core.http.serving.uvicorn_protocol).
HTTP_PROTOCOL = "apps.core.http.serving.v1_protocol:protocol"
# gunicorn's worker class and head limits (backend/gunicorn_conf.py).
GUNICORN_CONFIG = "python:backend.gunicorn_conf"
WSGI_APP = "backend.wsgi:application"


def asgi_command(settings, python: str = sys.executable) -> list[str]:
    """The argv that runs one ASGI server process as configured by ``settings``."""
    host, port = settings.BIND_HOST, str(settings.PORT)
    grace = str(settings.SERVER_GRACEFUL_TIMEOUT)
    limit = settings.SERVER_LIMIT_CONCURRENCY
    if settings.ASGI_SERVER == "uvicorn":
        cmd = [python, "-m", "uvicorn", ASGI_APP, "--host", host, "--port", port,
               "--loop", "uvloop", "--http", HTTP_PROTOCOL, "--ws", "websockets-sansio", "--lifespan", "on",
               "--timeout-graceful-shutdown", grace, "--backlog", str(settings.SERVER_BACKLOG),
               "--no-proxy-headers", "--no-server-header"]
        if limit:
            cmd += ["--limit-concurrency", str(limit)]
        if not settings.SERVER_ACCESS_LOG:
            cmd.append("--no-access-log")
        return cmd
    # daphne: in-process runner with a drain and lifespan (see module docstring).
    return [python, "-m", "backend.serve_daphne"]


def wsgi_command(settings, python: str = sys.executable) -> list[str]:
    """The argv of the WSGI baseline: gunicorn with ``WSGI_WORKERS`` sync workers (the worker
    class answering gunicorn's refusals as JSON, and the head limits, from ``GUNICORN_CONFIG``)."""
    cmd = [python, "-m", "gunicorn", WSGI_APP, "--bind", f"{settings.BIND_HOST}:{settings.PORT}",
           "--config", GUNICORN_CONFIG, "--workers", str(settings.WSGI_WORKERS),
           "--timeout", str(settings.WSGI_TIMEOUT), "--graceful-timeout", str(settings.SERVER_GRACEFUL_TIMEOUT),
           "--backlog", str(settings.SERVER_BACKLOG)]
    if settings.SERVER_ACCESS_LOG:
        cmd += ["--access-logfile", "-"]
    return cmd


def main(argv: list[str]) -> None:
    """Entry point; ``argv`` without the program name."""
    args = [a for a in argv if not a.startswith("--")]
    mode = args[0] if args else "asgi"
    if mode not in {"asgi", "wsgi"} or len(args) > 1 or set(argv) - {"asgi", "wsgi", "--print"}:
        sys.exit("usage: python -m backend.serve [asgi|wsgi] [--print]")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
    from django.conf import settings

    cmd = asgi_command(settings) if mode == "asgi" else wsgi_command(settings)
    if "--print" in argv:
        print(" ".join(cmd))
        return
    sys.stdout.flush()
    if mode == "asgi" and settings.ASGI_SERVER == "uvicorn":
        # uvicorn re-raises the SIGTERM it handled once its graceful shutdown is complete, so the
        # process would end as "killed by SIGTERM" (143). It restores the handler found at start
        # before doing so: with this one the process exits 0 after the drain, like the others.
        from uvicorn.main import main as uvicorn_main

        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        uvicorn_main(args=cmd[3:], prog_name="uvicorn")
        return
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
