"""Which server, HTTP protocol and /v1 adapter carry this process's requests.

Decided once, at the ASGI lifespan startup, from the server that is actually running (its
lifespan ``send`` callable, as :func:`apps.core.http.serving.lean_asgi.note_server` does) and from the
settings: logged as one INFO line of ``apps.core.http`` and shown on the admin's home page
(:mod:`apps.adminsite.health`). ``GET /v1/health/version`` keeps Appwrite's shape and says nothing
of it. Why: ``V1_PROTOCOL`` changes what is measured and what parses the requests, and a server
started by hand (``uvicorn backend.asgi:application`` without ``--http``) runs uvicorn's own
protocol without the project's head limits and client timeouts; the log says which one runs.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from apps.core.http.serving.asgi_types import Send

log = logging.getLogger("apps.core.http")

# uvicorn's --http values the product passes (backend.serve.HTTP_PROTOCOL) or a test may pass.
FACTORY = "apps.core.http.serving.v1_protocol:protocol"
LIMITED = "apps.core.http.serving.uvicorn_protocol:LimitedHttpToolsProtocol"

# This process's path once its lifespan started (``None`` before, and in processes without an
# ASGI lifespan: gunicorn's WSGI workers, management commands, Django's test client).
PATH: dict[str, Any] | None = None


def _server(owner: Any) -> str:
    module = type(owner).__module__ if owner is not None else ""
    if module.startswith("uvicorn."):
        return "uvicorn"
    if module.startswith("granian."):
        return "granian"
    if module == "backend.serve_daphne":
        return "daphne"
    return "unknown"


def _uvicorn_protocol(http: Any) -> tuple[str, bool]:
    """``(protocol, limits)`` for uvicorn's ``config.http`` (a ``module:name`` string, a class,
    or one of uvicorn's names such as ``auto``)."""
    name = http if isinstance(http, str) else f"{http.__module__}:{http.__qualname__}"
    if name == FACTORY:
        return settings.V1_PROTOCOL, True
    if name == LIMITED:
        return "asgi", True
    return f"uvicorn-{name}", False


def describe(lifespan_send: Send) -> dict[str, Any]:
    """``{"server", "protocol", "adapter", "limits", "text"}`` for the server whose lifespan
    ``send`` this is. ``server``: ``uvicorn``, ``granian``, ``daphne`` or ``unknown``;
    ``protocol``: ``direct`` (the project's /v1 protocol, apps.core.http.serving.v1_protocol), ``asgi``
    (every request through the ASGI interface; under uvicorn its httptools protocol with the
    project's limits) or ``uvicorn-<name>`` (uvicorn's own protocol, without them); ``adapter``:
    ``V1_ADAPTER``, which serves /v1 requests that reach the ASGI application; ``limits``: whether
    the project's head limits and client timeouts apply in the protocol; ``text``: one sentence."""
    owner = getattr(lifespan_send, "__self__", None)
    server = _server(owner)
    config = getattr(owner, "config", None)
    if server == "uvicorn" and config is not None:
        protocol, limits = _uvicorn_protocol(config.http)
    else:  # the other servers speak HTTP themselves and bound heads on their own (docs/deployment.md)
        protocol, limits = "asgi", server != "uvicorn"
    adapter = settings.V1_ADAPTER
    if protocol == "direct":
        text = (f"/v1 on the project's HTTP/1.1 protocol; other requests on uvicorn's httptools protocol "
                f"and the ASGI application ({adapter} adapter for /v1 requests handed over)")
    elif protocol == "asgi":
        text = f"every request through {server}'s ASGI interface, /v1 by the {adapter} adapter"
    else:
        text = (f"every request through uvicorn's {protocol[8:]} protocol WITHOUT the project's head "
                "limits and client timeouts (start it with python -m backend.serve)")
    return {"server": server, "protocol": protocol, "adapter": adapter, "limits": limits, "text": text}


def announce(lifespan_send: Send) -> dict[str, Any]:
    """Describe this process's path (:func:`describe`), keep it in :data:`PATH` and log it."""
    global PATH
    PATH = describe(lifespan_send)
    log.info("serving: server=%s protocol=%s adapter=%s: %s", PATH["server"], PATH["protocol"], PATH["adapter"],
             PATH["text"])
    return PATH
