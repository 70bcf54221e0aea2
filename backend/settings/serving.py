"""The HTTP edge: body limits, the /v1 adapter, realtime limits, the server launcher, the web
demo, and the GC threshold."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import BASE_DIR, PRODUCTION, _env, _env_bool, _env_float, _env_int, _env_list

# --- HTTP -------------------------------------------------------------------------------------
APPWRITE_VERSION = "1.9.6"
# Response format for requests without X-Appwrite-Response-Format (Appwrite's
# _APP_SYSTEM_RESPONSE_FORMAT): an older version answers such clients in that version's model
# shapes (apps.core.http.formats); empty = the current format.
RESPONSE_FORMAT = _env("RESPONSE_FORMAT", "")
if RESPONSE_FORMAT and not all(p.isdigit() for p in RESPONSE_FORMAT.split(".")[:3]) or RESPONSE_FORMAT.count(".") > 2:
    raise ImproperlyConfigured(f"RESPONSE_FORMAT must be a version such as 1.8.0, got {RESPONSE_FORMAT!r}")
# Largest request body the /v1 layer buffers, in bytes: one 5 MiB upload chunk plus multipart
# overhead. Larger bodies are refused with 413 before they are read.
MAX_REQUEST_BODY = _env_int("MAX_REQUEST_BODY", 5 * 1024 * 1024 + 256 * 1024, minimum=1024)
# Largest body that is not multipart (JSON, urlencoded), and the most bytes of form fields (not
# files) one multipart body may carry: both are held in memory whole. Over it: 413.
MAX_JSON_BODY = _env_int("MAX_JSON_BODY", 4 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_JSON_BODY
# How ASGI serves /v1: "django" (Django's ASGI handler + the adapter middleware) or "lean"
# (the lean ASGI adapter, no Django per-request machinery). WSGI always uses the middleware.
V1_ADAPTER = _env("V1_ADAPTER", "lean").lower()
if V1_ADAPTER not in {"django", "lean"}:
    raise ImproperlyConfigured(f"V1_ADAPTER must be 'django' or 'lean', got {V1_ADAPTER!r}")
# How uvicorn carries /v1 (apps.core.http.serving.v1_protocol's factory reads it): "direct" (the project's own
# HTTP/1.1 protocol serves /v1 on the event loop and hands every other request to uvicorn's httptools
# protocol) or "asgi" (uvicorn's httptools protocol with the head limits and client timeouts,
# apps.core.http.serving.uvicorn_protocol, and the ASGI interface for every request). Default: "direct", or
# "asgi" with V1_ADAPTER=django (Django's handler is an ASGI application). Other ASGI servers are ASGI only.
V1_PROTOCOL = _env("V1_PROTOCOL", "asgi" if V1_ADAPTER == "django" else "direct").lower()
if V1_PROTOCOL not in {"direct", "asgi"}:
    raise ImproperlyConfigured(f"V1_PROTOCOL must be 'direct' or 'asgi', got {V1_PROTOCOL!r}")
if V1_PROTOCOL == "direct" and V1_ADAPTER == "django":
    raise ImproperlyConfigured("V1_PROTOCOL=direct serves /v1 without an ASGI adapter; "
                               "V1_ADAPTER=django needs V1_PROTOCOL=asgi")
# Request bodies and uploaded file parts above this many bytes are spooled to disk rather than
# held in memory (Django's ASGI body spool and multipart upload handlers), so eight concurrent
# 5 MiB upload chunks cost disk, not RSS (docs/storage.md, memory test).
FILE_UPLOAD_MAX_MEMORY_SIZE = _env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 1024 * 1024, minimum=1024)
# Request heads (apps.core.http.serving.limits; docs/reliability.md). Both builds refuse,
# with a JSON error, a request line over MAX_REQUEST_LINE bytes (414), more than
# MAX_HEADER_COUNT header fields or more than MAX_HEADER_BYTES bytes of header names and values
# (431). The request line defaults to 32 KiB because SDK list calls carry their queries in the
# URL (Appwrite allows 100 of them); at most 48 KiB (uvicorn refuses longer targets itself, as
# plain text). Header defaults: nginx's 4 x 8 KiB header buffers and gunicorn's 100 fields.
MAX_REQUEST_LINE = _env_int("MAX_REQUEST_LINE", 32 * 1024, minimum=256)
if MAX_REQUEST_LINE > 48 * 1024:
    raise ImproperlyConfigured(f"MAX_REQUEST_LINE is at most 49152 bytes, got {MAX_REQUEST_LINE}")
MAX_HEADER_COUNT = _env_int("MAX_HEADER_COUNT", 100, minimum=8)
MAX_HEADER_BYTES = _env_int("MAX_HEADER_BYTES", 32 * 1024, minimum=1024)
# Client timeouts of the ASGI build under uvicorn (apps.core.http.serving.uvicorn_protocol), in seconds:
# a request head must arrive within SERVER_HEADER_TIMEOUT of its first byte, a body may go
# SERVER_BODY_TIMEOUT without a byte (both answered 408 and closed; nginx's client_header_timeout
# and client_body_timeout), and a connection without a request in progress is closed after
# SERVER_IDLE_TIMEOUT (before its first request too; uvicorn's keep-alive default).
SERVER_HEADER_TIMEOUT = _env_float("SERVER_HEADER_TIMEOUT", 30.0, positive=True)
SERVER_BODY_TIMEOUT = _env_float("SERVER_BODY_TIMEOUT", 60.0, positive=True)
SERVER_IDLE_TIMEOUT = _env_float("SERVER_IDLE_TIMEOUT", 5.0, positive=True)
# Peers whose X-Forwarded-For and X-Forwarded-Proto are believed (the load balancer), as IPs or
# CIDR networks. From any other peer both headers are ignored.
TRUSTED_PROXIES = _env_list("TRUSTED_PROXIES", [])

# --- Realtime (apps.realtime) -----------------------------------------------------------------
REALTIME_CONNECTIONS_PER_MINUTE = _env_int("REALTIME_CONNECTIONS_PER_MINUTE", 128)  # per client IP; 0 = off
REALTIME_MESSAGES_PER_MINUTE = _env_int("REALTIME_MESSAGES_PER_MINUTE", 32)  # per connection; 0 = off
REALTIME_SEND_QUEUE = _env_int("REALTIME_SEND_QUEUE", 1000, minimum=1)  # events queued per socket before close 1013
REALTIME_AUTH_TTL = _env_float("REALTIME_AUTH_TTL", 5.0)  # seconds a socket's roles are trusted before re-check
REALTIME_MAX_SUBSCRIPTIONS = _env_int("REALTIME_MAX_SUBSCRIPTIONS", 100, minimum=1)  # per connection
REALTIME_MAX_MESSAGE_BYTES = _env_int("REALTIME_MAX_MESSAGE_BYTES", 65536, minimum=1024)  # one client frame
REALTIME_PUBLISH_TIMEOUT = _env_float("REALTIME_PUBLISH_TIMEOUT", 2.0, positive=True)  # seconds for one publish
# After a publish failed for a key-value store outage, writes leave their events in the database
# outbox (apps/realtime/outbox.py) instead of each paying the timeout again, and the outbox relay
# tries Redis again at most this many seconds apart (from 0.05 s, doubling); the events are
# relayed, in order, as soon as it answers. A WSGI process (no relay) skips Redis for this long
# after a failure; 0 = each of its writes tries again.
REALTIME_PUBLISH_RETRY_SECONDS = _env_float("REALTIME_PUBLISH_RETRY_SECONDS", 1.0)
# Every ASGI process's outbox relay looks this often for outbox events that no writer published
# (its process crashed after the commit, or a WSGI process stored them during an outage) and
# relays those older than this.
REALTIME_OUTBOX_POLL_SECONDS = _env_float("REALTIME_OUTBOX_POLL_SECONDS", 1.0, positive=True)
# Events travel on a Redis stream (apps/realtime/hub.py) trimmed to about this many entries; a
# process that lost Redis delivers what it missed when it is back, if still in the stream.
REALTIME_STREAM_MAXLEN = _env_int("REALTIME_STREAM_MAXLEN", 10000, minimum=100)
# ... and if not older than this many seconds (older missed events are skipped and logged;
# writers trim entries older than this and an idle stream expires after it).
REALTIME_REPLAY_SECONDS = _env_float("REALTIME_REPLAY_SECONDS", 30.0, positive=True)
# --- Serving (backend.serve) -------------------------------------------------------------------
# The launcher ``python -m backend.serve`` execs the server named here for the ASGI build, or
# gunicorn for the WSGI baseline (``python -m backend.serve wsgi``). See docs/deployment.md.
# granian is not one of them: its Rust HTTP layer answers some malformed requests with plain-text
# or empty bodies instead of the API's JSON errors and has no body or idle timeout of its own
# (docs/decisions/granian.md); the load tests still run it as a comparison column.
ASGI_SERVERS = ("uvicorn", "daphne")
ASGI_SERVER = _env("ASGI_SERVER", "uvicorn").lower()
if ASGI_SERVER not in ASGI_SERVERS:
    raise ImproperlyConfigured(f"ASGI_SERVER must be one of {', '.join(ASGI_SERVERS)}, got {ASGI_SERVER!r}")
BIND_HOST = _env("BIND_HOST", "127.0.0.1")
PORT = _env_int("PORT", 8000, minimum=1)
# The scheme://host[:port] clients reach this API at (behind a proxy: the proxy's public address).
# Every absolute URL the server makes (mail links' own-host check, the default magic-URL page,
# OAuth2 callbacks) is built from it, never from the request's Host or X-Forwarded-Host header.
# Required in production; development defaults to http://127.0.0.1:<PORT>, where the quick start listens.
PUBLIC_URL = _env("PUBLIC_URL", "" if PRODUCTION else f"http://127.0.0.1:{PORT}").rstrip("/")
if PRODUCTION and not PUBLIC_URL:
    raise ImproperlyConfigured(
        "PUBLIC_URL is required when APP_ENV=production: the scheme://host[:port] clients reach "
        "this API at, e.g. https://api.example.com (mailed links and OAuth2 callbacks use it)."
    )
try:
    _public = urlsplit(PUBLIC_URL)
    _public_ok = _public.port is None or 0 < _public.port < 65536
except ValueError:
    _public, _public_ok = urlsplit(""), False
if not _public_ok or _public.scheme not in ("http", "https") or not _public.hostname or _public.path \
        or _public.query or _public.fragment or _public.username is not None:
    raise ImproperlyConfigured(f"PUBLIC_URL must be scheme://host[:port] (http or https), got {PUBLIC_URL!r}")
# Seconds a stopping server waits for in-flight requests before it closes them.
SERVER_GRACEFUL_TIMEOUT = _env_int("SERVER_GRACEFUL_TIMEOUT", 20, minimum=1)
# Back-pressure: concurrent connections (uvicorn) one process takes before it
# answers 503 at once instead of queueing without bound; 0 = no limit.
# uvicorn counts idle keep-alive connections too, so the default sits above the 1,000 clients one
# process is load-tested with, at the listen backlog.
SERVER_LIMIT_CONCURRENCY = _env_int("SERVER_LIMIT_CONCURRENCY", 2048, minimum=0)
# /v1 requests one ASGI process is handling at once (complete body to answer start); one more
# gets a JSON 503 with Retry-After before any work (apps.core.http.serving.asgi_app.admission_limit); 0 = no limit. At ~1 ms of CPU per API
# request, 1024 in progress is about a second of queued work: past that a fast refusal serves
# a client better than a slow answer. Below SERVER_LIMIT_CONCURRENCY, so clients on open
# connections get the API's JSON error rather than the server's plain-text one.
API_MAX_IN_FLIGHT = _env_int("API_MAX_IN_FLIGHT", 1024, minimum=0)
SERVER_BACKLOG = _env_int("SERVER_BACKLOG", 2048, minimum=1)
SERVER_ACCESS_LOG = _env_bool("SERVER_ACCESS_LOG", False)
# The request log (apps.core.http.requestlog; docs/admin.md): when on, every /v1 request that
# reaches the pipeline is kept as one row (time, project, method, route, status, duration, IP,
# caller, request ID, user agent), written in batches about once a second by a background task
# (ASGI) or thread (WSGI), and listed read-only in the admin. Off: the pipeline is the same
# function as without the feature (chosen once at start), nothing is buffered or written.
REQUEST_LOG = _env_bool("REQUEST_LOG", False)
# Days a request log entry is kept; the worker's periodic job deletes older ones (on or off).
REQUEST_LOG_DAYS = _env_int("REQUEST_LOG_DAYS", 7, minimum=1)
# WSGI baseline (gunicorn sync workers): one request per worker at a time, so 2 per core keeps a
# core busy while the other worker waits on PostgreSQL/Redis.
WSGI_WORKERS = _env_int("WSGI_WORKERS", 2 * (getattr(os, "process_cpu_count", os.cpu_count)() or 1), minimum=1)
WSGI_TIMEOUT = _env_int("WSGI_TIMEOUT", 30, minimum=1)

# --- Web demo (examples/web-notes) -----------------------------------------------------------
# Off by default. When on, the built notes demo is served at /demo/ from DEMO_DIR (the Vite
# build output), so the page and the API share one origin.
DEMO_ENABLED = _env_bool("DEMO_ENABLED", False)
DEMO_DIR = Path(_env("DEMO_DIR", str(BASE_DIR / "examples" / "web-notes" / "dist"))).resolve()
if DEMO_ENABLED and not (DEMO_DIR / "index.html").is_file():
    raise ImproperlyConfigured(
        f"DEMO_ENABLED is true but {DEMO_DIR}/index.html does not exist. Build the demo first "
        "(`npm --prefix examples/web-notes ci && npm --prefix examples/web-notes run build`) or set DEMO_DIR."
    )

# Allocations between collections of the cyclic GC's youngest generation (Python's default is
# 2000); 0 = leave Python's default. See apps/core/apps.py.
GC_GEN0_THRESHOLD = _env_int("GC_GEN0_THRESHOLD", 20000, minimum=0)
