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
]

# The /v1 adapter is outermost: on /v1 the admin's middleware below it never runs.
MIDDLEWARE = [
    "apps.core.http.django_adapter.V1Middleware",
    "django.middleware.security.SecurityMiddleware",
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
DB_POOL_TIMEOUT = _env_float("DB_POOL_TIMEOUT", 5.0)  # seconds to wait for a free connection
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
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

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

# --- HTTP -------------------------------------------------------------------------------------
APPWRITE_VERSION = "1.9.6"
# Largest request body the /v1 layer buffers, in bytes: one 5 MiB upload chunk plus multipart
# overhead (contract §9.1). Larger bodies are refused with 413 before they are read.
MAX_REQUEST_BODY = _env_int("MAX_REQUEST_BODY", 5 * 1024 * 1024 + 256 * 1024, minimum=1024)
MAX_JSON_BODY = _env_int("MAX_JSON_BODY", 4 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY
FILE_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY
# Peers whose X-Forwarded-For is believed (the load balancer), as IPs or CIDR networks.
TRUSTED_PROXIES = _env_list("TRUSTED_PROXIES", [])

# --- Django admin and static files ------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = _env("STATIC_ROOT", str(BASE_DIR / "var" / "static"))
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION

LOG_LEVEL = _env("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "apps": {"level": LOG_LEVEL, "handlers": ["console"], "propagate": False},
        # 4xx answers are normal API traffic; Django would log each one as a warning.
        "django.request": {"level": "ERROR", "handlers": ["console"], "propagate": False},
    },
}

# --- /v1 pipeline strategies (apps.core.http.pipeline) ----------------------------------------
V1_PROJECT_RESOLVER = "apps.projects.selectors.project_resolve"
V1_ORIGIN_CHECKER = "apps.projects.selectors.origin_allowed"
V1_AUTHENTICATOR = "apps.accounts.authn.authenticate"
V1_ABUSE_CHECK = None

# --- Load tests only --------------------------------------------------------------------------
# BENCH_APP=1 (set by loadtests/run.py, never in a product deployment) installs the benchmark
# endpoints /v1/bench/wait and /v1/bench/cpu (loadtests/benchapp).
BENCH_APP = _env_bool("BENCH_APP", False)
if BENCH_APP:
    INSTALLED_APPS.append("loadtests.benchapp")
