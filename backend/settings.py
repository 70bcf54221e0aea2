"""Django settings: the only module that reads the process environment.

Every variable is read, cast and validated here; other modules read ``django.conf.settings``.
With neither ``DATABASE_URL`` nor ``REDIS_URL`` set the server runs on the embedded default
(SQLite, in-process cache and channel layer). ``APP_ENV=production`` turns on the strict checks:
``SECRET_KEY`` and ``ALLOWED_HOSTS`` are required and ``DEBUG`` must be off.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def _env_bool(name: str, default: bool) -> bool:
    raw = _env(name)
    if not raw:
        return default
    if raw.lower() in {"1", "true", "yes", "on", "enabled"}:
        return True
    if raw.lower() in {"0", "false", "no", "off", "disabled"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def _env_int(name: str, default: int, minimum: int = 0) -> int:
    raw = _env(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def _env_float(name: str, default: float) -> float:
    raw = _env(name)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def _env_list(name: str, default: list[str]) -> list[str]:
    raw = _env(name)
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


APP_ENV = _env("APP_ENV", "development").lower()
if APP_ENV not in {"development", "production"}:
    raise ImproperlyConfigured(f"APP_ENV must be 'development' or 'production', got {APP_ENV!r}")
PRODUCTION = APP_ENV == "production"

DEBUG = _env_bool("DEBUG", False)
SECRET_KEY = _env("SECRET_KEY")
if PRODUCTION:
    if not SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. A production start (APP_ENV=production) needs a long random "
            "SECRET_KEY: it signs JWTs and admin sessions. Generate one with "
            "`python -c 'import secrets; print(secrets.token_urlsafe(64))'`."
        )
    if len(SECRET_KEY) < 32 or "change-me" in SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY looks like a placeholder or is shorter than 32 characters. Generate one with "
            "`python -c 'import secrets; print(secrets.token_urlsafe(64))'`."
        )
    if DEBUG:
        raise ImproperlyConfigured("DEBUG must be off when APP_ENV=production.")
elif not SECRET_KEY:
    # Development only: a fixed, public key so that several local processes agree on JWTs.
    SECRET_KEY = "insecure-development-key-do-not-use-in-production-0123456789abcdef"

ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["*"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is required when APP_ENV=production.")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "apps.core",
    "apps.projects",
    "apps.accounts",
    "apps.abuse",
    "apps.storage",
    "apps.databases",
    "apps.realtime",
]

# The /v1 adapter is outermost: on /v1 the admin's middleware below it never runs.
MIDDLEWARE = [
    "apps.core.http.django_adapter.V1Middleware",
    "django.middleware.security.SecurityMiddleware",
    # Admin static files from STATIC_ROOT (collectstatic runs in the image build): WhiteNoise,
    # made async-capable so that the chain stays async under ASGI (apps/core/http/static.py).
    "apps.core.http.static.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "backend.urls"
WSGI_APPLICATION = "backend.wsgi.application"
ASGI_APPLICATION = "backend.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------------
DATABASE_URL = _env("DATABASE_URL")
DB_POOL_MIN_SIZE = _env_int("DB_POOL_MIN_SIZE", 2, minimum=0)
DB_POOL_MAX_SIZE = _env_int("DB_POOL_MAX_SIZE", 20, minimum=1)
# Seconds a request waits for a free pooled connection before 503: the same bound as a WSGI
# worker's request (WSGI_TIMEOUT). The queue's length, not its wait, is the back-pressure:
# past DB_POOL_MAX_WAITING waiting requests the answer is an immediate 503.
DB_POOL_TIMEOUT = _env_float("DB_POOL_TIMEOUT", 30.0)
DB_POOL_MAX_WAITING = _env_int("DB_POOL_MAX_WAITING", 1000, minimum=0)
DB_POOL_MAX_LIFETIME = _env_float("DB_POOL_MAX_LIFETIME", 1800.0)
DB_POOL_MAX_IDLE = _env_float("DB_POOL_MAX_IDLE", 300.0)
DB_STATEMENT_TIMEOUT_MS = _env_int("DB_STATEMENT_TIMEOUT_MS", 30000)

if DATABASE_URL:
    _db = dj_database_url.parse(DATABASE_URL)
    if _db["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_URL must be a postgres:// URL (or unset for SQLite).")
    _db["CONN_MAX_AGE"] = 0
    _db["CONN_HEALTH_CHECKS"] = True
    _db["OPTIONS"] = {
        "pool": {
            "min_size": min(DB_POOL_MIN_SIZE, DB_POOL_MAX_SIZE),
            "max_size": DB_POOL_MAX_SIZE,
            "timeout": DB_POOL_TIMEOUT,
            "max_waiting": DB_POOL_MAX_WAITING,
            "max_lifetime": DB_POOL_MAX_LIFETIME,
            "max_idle": DB_POOL_MAX_IDLE,
        },
    }
    DATABASES = {"default": _db}
else:
    SQLITE_PATH = _env("SQLITE_PATH", str(BASE_DIR / "db.sqlite3"))
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": SQLITE_PATH,
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis / cache ----------------------------------------------------------------------------
REDIS_URL = _env("REDIS_URL")
REDIS_POOL_MAX_SIZE = _env_int("REDIS_POOL_MAX_SIZE", 64, minimum=1)
REDIS_TIMEOUT = _env_float("REDIS_TIMEOUT", 2.0)  # seconds: connect, wait for a pooled connection

if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # capacity: messages queued per channel before the layer drops (each socket drains its channel
    # at once into its own bounded queue); group_expiry: longer than any socket lives.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer",
                                  "CONFIG": {"capacity": 10000, "group_expiry": 10 * 365 * 86400}}}

# --- Abuse checks (apps.abuse; README "Rate limits") ------------------------------------------
# Appwrite's _APP_OPTIONS_ABUSE: false/disabled = no counting, no blocking, no X-RateLimit-* headers.
ABUSE_ENABLED = _env_bool("ABUSE_ENABLED", True)
# Multiplies every default limit of apps/abuse/rules.py (rounded up, at least 1); explicit
# per-rule overrides below are taken as given.
ABUSE_LIMIT_MULTIPLIER = _env_float("ABUSE_LIMIT_MULTIPLIER", 1.0)
if not ABUSE_LIMIT_MULTIPLIER > 0:
    raise ImproperlyConfigured(f"ABUSE_LIMIT_MULTIPLIER must be > 0, got {ABUSE_LIMIT_MULTIPLIER}")


def _abuse_overrides(raw: str) -> dict[str, dict]:
    """``ABUSE_LIMITS``: JSON object ``{"<rule>": <limit> | {"limit": n, "window": s, "fail": "open"|"closed"}}``.

    Returns ``{rule: {field: value}}`` with only the fields given; rule names are checked against
    the table when the abuse app loads.
    """
    if not raw:
        return {}
    import json

    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"ABUSE_LIMITS must be a JSON object: {exc}") from None
    if not isinstance(data, dict):
        raise ImproperlyConfigured("ABUSE_LIMITS must be a JSON object keyed by rule name")
    out: dict[str, dict] = {}
    for name, value in data.items():
        entry = {"limit": value} if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(entry, dict) or not entry or set(entry) - {"limit", "window", "fail"}:
            raise ImproperlyConfigured(f"ABUSE_LIMITS[{name!r}] must be an integer or an object of limit/window/fail")
        for field, minimum in (("limit", 0), ("window", 1)):
            if field in entry:
                v = entry[field]
                if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
                    raise ImproperlyConfigured(f"ABUSE_LIMITS[{name!r}].{field} must be an integer >= {minimum}")
        if "fail" in entry and entry["fail"] not in ("open", "closed"):
            raise ImproperlyConfigured(f"ABUSE_LIMITS[{name!r}].fail must be \"open\" or \"closed\"")
        out[name] = dict(entry)
    return out


ABUSE_LIMITS = _abuse_overrides(_env("ABUSE_LIMITS"))
# After a key-value store error, seconds during which checks skip the store and apply the rule's
# fail mode at once (no connect timeout paid per request), and seconds between two warnings.
ABUSE_KV_RETRY_SECONDS = _env_float("ABUSE_KV_RETRY_SECONDS", 1.0)
ABUSE_LOG_INTERVAL = _env_float("ABUSE_LOG_INTERVAL", 60.0)

# --- Passwords --------------------------------------------------------------------------------
# argon2id with Appwrite's own parameters (appwrite src/Appwrite/Auth/Hash/Argon2.php:
# time cost 4, memory 2 MiB, 3 lanes). Measured cost per check: see README "Password hashing".
ARGON2_TIME_COST = _env_int("ARGON2_TIME_COST", 4, minimum=1)
ARGON2_MEMORY_COST_KIB = _env_int("ARGON2_MEMORY_COST_KIB", 2048, minimum=8)
ARGON2_PARALLELISM = _env_int("ARGON2_PARALLELISM", 3, minimum=1)
PASSWORD_HASHERS = [
    "apps.accounts.hashers.AppwriteArgon2Hasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]

# --- Accounts ---------------------------------------------------------------------------------
SESSION_DURATION = _env_int("SESSION_DURATION", 31536000, minimum=60)  # seconds (Appwrite default)
JWT_DEFAULT_DURATION = 900  # seconds (Appwrite contract §3)

# --- Storage (apps.storage; README "Storage") ---------------------------------------------------
# Where file bytes live: "local" (a directory, STORAGE_ROOT) or "s3" (any S3-compatible service
# through django-storages). Keys are server-generated; client file names are only metadata.
STORAGE_BACKEND = _env("STORAGE_BACKEND", "local").lower()
if STORAGE_BACKEND not in {"local", "s3"}:
    raise ImproperlyConfigured(f"STORAGE_BACKEND must be 'local' or 's3', got {STORAGE_BACKEND!r}")
STORAGE_ROOT = _env("STORAGE_ROOT", str(BASE_DIR / "var" / "storage"))
# Chunks of unfinished uploads are kept here as part files (local disk in both modes; on the same
# filesystem as STORAGE_ROOT by default so finished local files are moved, not copied).
STORAGE_UPLOAD_DIR = _env("STORAGE_UPLOAD_DIR", str(Path(STORAGE_ROOT) / ".uploads"))
STORAGE_UPLOAD_EXPIRY = _env_int("STORAGE_UPLOAD_EXPIRY", 86400, minimum=1)  # seconds of inactivity
STORAGE_CLEANUP_INTERVAL = _env_int("STORAGE_CLEANUP_INTERVAL", 600, minimum=0)  # seconds; 0 = never inline
STORAGE_LIMIT = _env_int("STORAGE_LIMIT", 30000000, minimum=1)  # bytes: default bucket maximumFileSize
STORAGE_MAX_FILE_SIZE = _env_int("STORAGE_MAX_FILE_SIZE", 5 * 1024**3, minimum=1)  # bytes: cap on maximumFileSize
# File bodies one ASGI process streams at once; later downloads wait for a slot (FIFO) before
# their first byte. Bounds the memory of many slow readers (each holds one read of
# READ_SIZE = 256 KiB in flight); 0 = no bound.
STORAGE_STREAMS_MAX = _env_int("STORAGE_STREAMS_MAX", 32, minimum=0)
STORAGE_PREVIEW_MAX_SIZE = _env_int("STORAGE_PREVIEW_MAX_SIZE", 10 * 1024 * 1024, minimum=1)  # bytes (Appwrite: 10 MB)
STORAGE_S3_BUCKET = _env("STORAGE_S3_BUCKET")
STORAGE_S3_ENDPOINT_URL = _env("STORAGE_S3_ENDPOINT_URL")
STORAGE_S3_REGION = _env("STORAGE_S3_REGION", "us-east-1")
STORAGE_S3_ACCESS_KEY_ID = _env("STORAGE_S3_ACCESS_KEY_ID")
STORAGE_S3_SECRET_ACCESS_KEY = _env("STORAGE_S3_SECRET_ACCESS_KEY")
STORAGE_S3_PREFIX = _env("STORAGE_S3_PREFIX")
if STORAGE_BACKEND == "s3":
    if not STORAGE_S3_BUCKET:
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs STORAGE_S3_BUCKET.")
    _files_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": STORAGE_S3_BUCKET,
            "endpoint_url": STORAGE_S3_ENDPOINT_URL or None,
            "region_name": STORAGE_S3_REGION,
            "access_key": STORAGE_S3_ACCESS_KEY_ID or None,
            "secret_key": STORAGE_S3_SECRET_ACCESS_KEY or None,
            "location": STORAGE_S3_PREFIX,
            "file_overwrite": True,
            "default_acl": None,
            "querystring_auth": False,
        },
    }
else:
    _files_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": STORAGE_ROOT, "file_permissions_mode": 0o640, "directory_permissions_mode": 0o750},
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "files": _files_storage,
}

# --- HTTP -------------------------------------------------------------------------------------
APPWRITE_VERSION = "1.9.6"
# Largest request body the /v1 layer buffers, in bytes: one 5 MiB upload chunk plus multipart
# overhead (contract §9.1). Larger bodies are refused with 413 before they are read.
MAX_REQUEST_BODY = _env_int("MAX_REQUEST_BODY", 5 * 1024 * 1024 + 256 * 1024, minimum=1024)
MAX_JSON_BODY = _env_int("MAX_JSON_BODY", 4 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY
# How ASGI serves /v1: "django" (Django's ASGI handler + the adapter middleware) or "lean"
# (the lean ASGI adapter, no Django per-request machinery). WSGI always uses the middleware.
V1_ADAPTER = _env("V1_ADAPTER", "lean").lower()
if V1_ADAPTER not in {"django", "lean"}:
    raise ImproperlyConfigured(f"V1_ADAPTER must be 'django' or 'lean', got {V1_ADAPTER!r}")
# Request bodies and uploaded file parts above this many bytes are spooled to disk rather than
# held in memory (Django's ASGI body spool and multipart upload handlers), so eight concurrent
# 5 MiB upload chunks cost disk, not RSS (README "Storage", memory test).
FILE_UPLOAD_MAX_MEMORY_SIZE = _env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 1024 * 1024, minimum=1024)
# Peers whose X-Forwarded-For is believed (the load balancer), as IPs or CIDR networks.
TRUSTED_PROXIES = _env_list("TRUSTED_PROXIES", [])

# --- Realtime (apps.realtime; contract §10, §11) ------------------------------------------------
REALTIME_CONNECTIONS_PER_MINUTE = _env_int("REALTIME_CONNECTIONS_PER_MINUTE", 128)  # per client IP; 0 = off
REALTIME_MESSAGES_PER_MINUTE = _env_int("REALTIME_MESSAGES_PER_MINUTE", 32)  # per connection; 0 = off
REALTIME_SEND_QUEUE = _env_int("REALTIME_SEND_QUEUE", 1000, minimum=1)  # events queued per socket before close 1013
REALTIME_AUTH_TTL = _env_float("REALTIME_AUTH_TTL", 5.0)  # seconds a socket's roles are trusted before re-check
REALTIME_MAX_SUBSCRIPTIONS = _env_int("REALTIME_MAX_SUBSCRIPTIONS", 100, minimum=1)  # per connection
REALTIME_MAX_MESSAGE_BYTES = _env_int("REALTIME_MAX_MESSAGE_BYTES", 65536, minimum=1024)  # one client frame
REALTIME_PUBLISH_TIMEOUT = _env_float("REALTIME_PUBLISH_TIMEOUT", 2.0)  # seconds for one publish
# --- Serving (backend.serve) -------------------------------------------------------------------
# The launcher ``python -m backend.serve`` execs the server named here for the ASGI build, or
# gunicorn for the WSGI baseline (``python -m backend.serve wsgi``). See README "Deployment".
ASGI_SERVERS = ("uvicorn", "daphne", "granian")
ASGI_SERVER = _env("ASGI_SERVER", "uvicorn").lower()
if ASGI_SERVER not in ASGI_SERVERS:
    raise ImproperlyConfigured(f"ASGI_SERVER must be one of {', '.join(ASGI_SERVERS)}, got {ASGI_SERVER!r}")
BIND_HOST = _env("BIND_HOST", "127.0.0.1")
PORT = _env_int("PORT", 8000, minimum=1)
# Seconds a stopping server waits for in-flight requests before it closes them.
SERVER_GRACEFUL_TIMEOUT = _env_int("SERVER_GRACEFUL_TIMEOUT", 20, minimum=1)
# Back-pressure: concurrent connections (uvicorn) / requests (granian) one process takes before it
# answers 503 at once instead of queueing without bound; 0 = no limit (django-asgi-facts §4.6).
# uvicorn counts idle keep-alive connections too, so the default sits above the 1,000 clients one
# process is load-tested with (issue 10), at the listen backlog.
SERVER_LIMIT_CONCURRENCY = _env_int("SERVER_LIMIT_CONCURRENCY", 2048, minimum=0)
# /v1 requests one ASGI process is handling at once (complete body to answer start); one more
# gets a JSON 503 with Retry-After before any work (apps.core.http.asgi_app.admission_limit); 0 = no limit. At ~1 ms of CPU per API
# request, 1024 in progress is about a second of queued work: past that a fast refusal serves
# a client better than a slow answer. Below SERVER_LIMIT_CONCURRENCY, so clients on open
# connections get the API's JSON error rather than the server's plain-text one.
API_MAX_IN_FLIGHT = _env_int("API_MAX_IN_FLIGHT", 1024, minimum=0)
SERVER_BACKLOG = _env_int("SERVER_BACKLOG", 2048, minimum=1)
SERVER_ACCESS_LOG = _env_bool("SERVER_ACCESS_LOG", False)
# WSGI baseline (gunicorn sync workers): one request per worker at a time, so 2 per core keeps a
# core busy while the other worker waits on PostgreSQL/Redis.
WSGI_WORKERS = _env_int("WSGI_WORKERS", 2 * (os.process_cpu_count() or 1), minimum=1)
WSGI_TIMEOUT = _env_int("WSGI_TIMEOUT", 30, minimum=1)

# --- Django admin and static files ------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = _env("STATIC_ROOT", str(BASE_DIR / "var" / "static"))
# Development serves admin assets straight from the apps, so no collectstatic is needed there.
WHITENOISE_USE_FINDERS = not PRODUCTION
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION

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

LOG_LEVEL = _env("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "apps": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        "backend": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        # 4xx answers are normal API traffic; Django would log each one as a warning.
        "django.request": {"level": "ERROR", "handlers": ["console"], "propagate": False},
    },
}

# Allocations between collections of the cyclic GC's youngest generation (Python's default is
# 2000); 0 = leave Python's default. See apps/core/apps.py.
GC_GEN0_THRESHOLD = _env_int("GC_GEN0_THRESHOLD", 20000, minimum=0)

# Seconds a process keeps a resolved project (apps/projects/selectors.py); 0 = no cache.
PROJECT_CACHE_TTL = _env_int("PROJECT_CACHE_TTL", 30, minimum=0)
# Seconds a process keeps a session with its user, a table with its columns, an API key
# (apps/core/cache.py: dropped in every process by the write that changes them, via Redis
# pub/sub); 0 = no cache. Without REDIS_URL nothing is cached (no way to tell other processes).
LOCAL_CACHE_TTL = _env_int("LOCAL_CACHE_TTL", 60, minimum=0)

# --- /v1 pipeline strategies (apps.core.http.pipeline) ----------------------------------------
V1_PROJECT_RESOLVER = "apps.projects.selectors.project_resolve"
V1_ORIGIN_CHECKER = "apps.projects.selectors.origin_allowed"
V1_AUTHENTICATOR = "apps.accounts.authn.authenticate"
V1_ABUSE_CHECK = "apps.abuse.services.abuse_check"

# --- Load tests only --------------------------------------------------------------------------
# BENCH_APP=1 (set by loadtests/run.py, never in a product deployment) installs the benchmark
# endpoints /v1/bench/wait and /v1/bench/cpu (loadtests/benchapp).
BENCH_APP = _env_bool("BENCH_APP", False)
if BENCH_APP:
    INSTALLED_APPS.append("loadtests.benchapp")
