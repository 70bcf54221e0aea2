"""Django settings: the only package that reads the process environment.

Every variable is read, cast and validated here; other modules read ``django.conf.settings``.
With neither ``DATABASE_URL`` nor ``REDIS_URL`` set the server runs on the embedded default
(SQLite and the in-process cache). ``APP_ENV=production`` turns on the strict checks:
``SECRET_KEY``, ``ALLOWED_HOSTS`` and ``PUBLIC_URL`` are required and ``DEBUG`` must be off.
Elsewhere a missing ``SECRET_KEY`` is generated once and kept in ``SECRET_KEY_FILE``
(``backend.settings.secretkey``).

This module holds Django's own settings; one module per sub-domain holds the rest:
``data`` (PostgreSQL/SQLite, Redis, caches), ``security`` (rate limits, passwords, sessions),
``storage`` (file bytes), ``background`` (mail, the task queue and its worker), ``serving`` (HTTP limits, realtime, the launcher, the web demo).
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import *  # noqa: F403  (APP_ENV, BASE_DIR, PRODUCTION)
from backend.settings.base import BASE_DIR, PRODUCTION, _env, _env_bool, _env_int, _env_list

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

ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["*"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is required when APP_ENV=production.")

INSTALLED_APPS = [
    "daphne",
    "apps.adminsite",  # before the admin: its admin/base_site.html adds the project's styles
    "apps.adminsite.apps.ProductAdminConfig",  # django.contrib.admin with the project's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "apps.core",
    "apps.projects",
    "apps.accounts",
    "apps.teams",
    "apps.audit",
    "apps.abuse",
    "apps.storage",
    "apps.messaging",
    "apps.databases",
    "apps.realtime",
    "apps.avatars",
    "apps.locale",
    "apps.health",
    "apps.webhooks",
    "apps.functions",
    "django_tasks_db",
]

# The /v1 adapter is outermost: on /v1 the admin's middleware below it never runs.
MIDDLEWARE = [
    "apps.core.http.serving.django_adapter.V1Middleware",
    "apps.core.http.serving.proxy.ForwardedProtoMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    # Admin static files from STATIC_ROOT (collectstatic runs in the image build): WhiteNoise,
    # made async-capable so that the chain stays async under ASGI (apps/core/http/serving/static.py).
    "apps.core.http.serving.static.StaticFilesMiddleware",
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

# --- Django admin and static files ------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = _env("STATIC_ROOT", str(BASE_DIR / "var" / "static"))
# Development serves admin assets straight from the apps, so no collectstatic is needed there.
WHITENOISE_USE_FINDERS = not PRODUCTION
LANGUAGE_CODE = "en-us"
FORMAT_MODULE_PATH = ["apps.adminsite.formats"]  # the admin's dates as 2026-12-01 16:05
TIME_ZONE = "UTC"
USE_I18N = False  # mail languages are chosen per request (apps.core.domain.mail), not by Django
USE_TZ = True

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

# --- /v1 pipeline strategies (apps.core.http.pipeline) ----------------------------------------
# The /v1 route table (as Django's ROOT_URLCONF names the URLconf): core reaches it through this
# setting and never imports the edge (backend/).
V1_ROUTER = "backend.urls.v1_router"
V1_PROJECT_RESOLVER = "apps.projects.selectors.project_resolve"
V1_ORIGIN_CHECKER = "apps.projects.selectors.origin_allowed"
V1_AUTHENTICATOR = "apps.accounts.credentials.authn.authenticate"
V1_ABUSE_CHECK = "apps.abuse.services.abuse_check"

from backend.settings.background import *  # noqa: E402,F403
from backend.settings.data import *  # noqa: E402,F403
from backend.settings.functions import *  # noqa: E402,F403
from backend.settings.security import *  # noqa: E402,F403
from backend.settings.services import *  # noqa: E402,F403
from backend.settings.serving import *  # noqa: E402,F403
from backend.settings.storage import *  # noqa: E402,F403

if not SECRET_KEY:
    # Development only (production stopped above): a random key generated on the first start and
    # kept beside the embedded database, so restarts and sibling processes agree on JWTs.
    from pathlib import Path

    from backend.settings.data import SECRET_KEY_FILE
    from backend.settings.secretkey import development_secret_key

    SECRET_KEY = development_secret_key(Path(SECRET_KEY_FILE))

# --- The admin behind a TLS-terminating proxy ------------------------------------------------
# Django believes X-Forwarded-Proto: https (SECURE_PROXY_SSL_HEADER), but only because
# apps.core.http.serving.proxy.ForwardedProtoMiddleware first drops that header from any peer outside
# TRUSTED_PROXIES; /v1 reads it through the same rule (apps.core.http.clientip).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
_PUBLIC_HTTPS = PUBLIC_URL.startswith("https://")  # noqa: F405
# The admin's cookies carry Secure in production and whenever the public address is https.
SESSION_COOKIE_SECURE = PRODUCTION or _PUBLIC_HTTPS
CSRF_COOKIE_SECURE = PRODUCTION or _PUBLIC_HTTPS
SESSION_COOKIE_HTTPONLY = True
# The admin's login and forms accept the public address as an origin (the browser's Origin header
# behind a proxy that rewrites Host would otherwise fail the CSRF check).
CSRF_TRUSTED_ORIGINS = [PUBLIC_URL]  # noqa: F405
# HTTP Strict Transport Security on the admin's https answers (seconds; 0 = off). Production
# default: one year, without subdomains or preload, which an operator opts into knowingly.
SECURE_HSTS_SECONDS = _env_int("SECURE_HSTS_SECONDS", 31536000 if PRODUCTION else 0)
# Whether HSTS covers every subdomain, and asks for the browsers' preload list: both bind the
# whole domain for a year or more, so they stay an operator's explicit choice (off by default;
# `check --deploy`'s reminders of them, W005 and W021, are silenced below for that reason).
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]
# The admin redirects plain-http requests to https when the public address is https (behind a
# TLS proxy: when X-Forwarded-Proto from a trusted proxy says http). /v1 is never redirected.
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", _PUBLIC_HTTPS)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy on the admin's pages (Django's ContentSecurityPolicyMiddleware): only
# the admin's own scripts, styles and images; no framing, no plugins, forms post to itself.
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

# --- Load tests only --------------------------------------------------------------------------
# BENCH_APP=1 (set by loadtests/run.py, never in a product deployment) installs the benchmark
# endpoints /v1/bench/wait and /v1/bench/cpu (loadtests/benchapp).
BENCH_APP = _env_bool("BENCH_APP", False)
# Endpoint lists (dotted paths) added to the /v1 route table after the product's own.
V1_EXTRA_ENDPOINTS: list[str] = []
if BENCH_APP:
    INSTALLED_APPS.append("loadtests.benchapp")
    V1_EXTRA_ENDPOINTS.append("loadtests.benchapp.urls.endpoints")
