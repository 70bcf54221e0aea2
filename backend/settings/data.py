"""Where data lives: PostgreSQL (or SQLite), Redis (or process memory), the process caches."""

from __future__ import annotations

import math
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import BASE_DIR, _env, _env_float, _env_int

# --- Database ---------------------------------------------------------------------------------
DATABASE_URL = _env("DATABASE_URL")
DB_POOL_MIN_SIZE = _env_int("DB_POOL_MIN_SIZE", 2, minimum=0)
DB_POOL_MAX_SIZE = _env_int("DB_POOL_MAX_SIZE", 20, minimum=1)
# Seconds an ASGI request waits in the queue for a pooled connection that another request will
# give back, before 503. The queue's length, not its wait, is the back-pressure: past
# DB_POOL_MAX_WAITING waiting requests the answer is an immediate 503.
DB_POOL_TIMEOUT = _env_float("DB_POOL_TIMEOUT", 30.0, positive=True)
# Seconds a request waits for a connection when none will be given back: PostgreSQL down or
# restarting (the ASGI pool after a lost connection, until a statement succeeds again), and
# always on the WSGI build, whose worker holds at most one connection (its pool never queues
# behind another request). Also libpq's connect_timeout (whole seconds, at least 2). Well
# under WSGI_TIMEOUT, so the answer is a JSON 503, not the worker being killed.
DB_CONNECT_TIMEOUT = _env_float("DB_CONNECT_TIMEOUT", 3.0, positive=True)
DB_POOL_MAX_WAITING = _env_int("DB_POOL_MAX_WAITING", 1000, minimum=0)
DB_POOL_MAX_LIFETIME = _env_float("DB_POOL_MAX_LIFETIME", 1800.0, positive=True)
DB_POOL_MAX_IDLE = _env_float("DB_POOL_MAX_IDLE", 300.0, positive=True)
# PostgreSQL statement_timeout of every API statement (the ASGI pool; the WSGI server's
# connections, set in backend/wsgi.py), milliseconds; 0 = none. Answered 408 database_timeout.
# Not applied to migrations, management commands and the worker.
DB_STATEMENT_TIMEOUT_MS = _env_int("DB_STATEMENT_TIMEOUT_MS", 5000, minimum=0)
# The same for the statements of a schema change (columns, indexes, relationships, a table's
# delete), which rewrite or index every row of the table; milliseconds, 0 = none.
DB_SCHEMA_STATEMENT_TIMEOUT_MS = _env_int("DB_SCHEMA_STATEMENT_TIMEOUT_MS", 300000, minimum=0)

# SQLite's synchronous setting for every connection of the embedded default (the API's and
# Django's). NORMAL (the default here, as PocketBase runs SQLite): in WAL mode a commit does
# not wait for fsync, the database stays consistent, and a power loss or OS crash (not a
# crash of this server) may lose the last commits. FULL: every commit is fsynced.
SQLITE_SYNCHRONOUS = _env("SQLITE_SYNCHRONOUS", "NORMAL").upper()
if SQLITE_SYNCHRONOUS not in ("OFF", "NORMAL", "FULL", "EXTRA"):
    raise ImproperlyConfigured("SQLITE_SYNCHRONOUS must be OFF, NORMAL, FULL or EXTRA.")

# The embedded database's file (used without DATABASE_URL). Its folder is the data folder of a
# development install: the generated SECRET_KEY is kept there too (backend/settings/secretkey.py).
SQLITE_PATH = _env("SQLITE_PATH", str(BASE_DIR / "db.sqlite3"))
SECRET_KEY_FILE = str(Path(SQLITE_PATH).resolve().parent / "secret_key")

if DATABASE_URL:
    _db = dj_database_url.parse(DATABASE_URL)
    if _db["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_URL must be a postgres:// URL (or unset for SQLite).")
    _db["CONN_MAX_AGE"] = 0
    _db["CONN_HEALTH_CHECKS"] = True
    _db["OPTIONS"] = {
        "connect_timeout": max(2, math.ceil(DB_CONNECT_TIMEOUT)),
        # The pool's check (a dead-connection test without a round trip) is set by apps.core.
        "pool": {
            "min_size": min(DB_POOL_MIN_SIZE, DB_POOL_MAX_SIZE),
            "max_size": DB_POOL_MAX_SIZE,
            "timeout": DB_CONNECT_TIMEOUT,
            "max_waiting": DB_POOL_MAX_WAITING,
            "max_lifetime": DB_POOL_MAX_LIFETIME,
            "max_idle": DB_POOL_MAX_IDLE,
        },
    }
    DATABASES = {"default": _db}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": SQLITE_PATH,
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE",
                        "init_command": f"PRAGMA synchronous={SQLITE_SYNCHRONOUS}"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis / cache ----------------------------------------------------------------------------
REDIS_URL = _env("REDIS_URL")
REDIS_POOL_MAX_SIZE = _env_int("REDIS_POOL_MAX_SIZE", 64, minimum=1)
REDIS_TIMEOUT = _env_float("REDIS_TIMEOUT", 2.0, positive=True)  # seconds: connect, and each call (a WSGI pool wait included)


def _redis_db(url: str | None) -> int:
    """The database number of a ``redis://host:port/<db>`` URL (0 when absent)."""
    from urllib.parse import parse_qs, urlsplit

    if not url:
        return 0
    parts = urlsplit(url)
    path = parts.path.strip("/") or (parse_qs(parts.query).get("db") or ["0"])[0]
    return int(path) if path.isdigit() else 0


# Prefix of this deployment's Redis names: its pub/sub channels (cache invalidation, health
# probe) and its keys (the realtime event stream). Keys already live in REDIS_URL's database,
# but pub/sub channels are shared by every database of a Redis server: the default names the
# database number, so deployments (or test runs) on different databases never hear each other.
# Set it explicitly when two deployments share one database number.
REDIS_PREFIX = _env("REDIS_PREFIX") or f"appwrite-py.db{_redis_db(REDIS_URL)}."

if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Seconds a process keeps a resolved project (apps/projects/selectors.py); 0 = no cache.
PROJECT_CACHE_TTL = _env_int("PROJECT_CACHE_TTL", 30, minimum=0)
# Seconds a process keeps a session with its user, a table with its columns, an API key
# (apps/core/drivers/cache.py: dropped in every process by the write that changes them, via Redis
# pub/sub); 0 = no cache. Without REDIS_URL only the ASGI build on SQLite caches (emptied whenever
# another connection commits, seen through PRAGMA data_version); WSGI workers then do not cache.
LOCAL_CACHE_TTL = _env_int("LOCAL_CACHE_TTL", 60, minimum=0)
