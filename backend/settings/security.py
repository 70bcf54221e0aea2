"""Abuse checks (rate limits, the admin's sign-in throttle), password hashing and staff password
rules, sessions and JWTs."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import _env, _env_bool, _env_float, _env_int, _env_list

# --- Abuse checks (apps.abuse; docs/rate-limits.md) -----------------------------------------------
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
# argon2id for product users and staff alike, at OWASP's Password Storage Cheat Sheet minimum
# (19 MiB of memory, 2 iterations, 1 lane). Appwrite itself uses t=4, m=2 MiB, p=3; hashes made
# with those (or any other argon2 parameters) still verify and are re-hashed with these at the
# user's next good sign-in (apps/accounts/services/accounts.py; staff: Django's check_password).
# Measured cost per hash: docs/security-admin-and-secrets.md ("Password hashing").
ARGON2_TIME_COST = _env_int("ARGON2_TIME_COST", 2, minimum=1)
ARGON2_MEMORY_COST_KIB = _env_int("ARGON2_MEMORY_COST_KIB", 19456, minimum=8)
ARGON2_PARALLELISM = _env_int("ARGON2_PARALLELISM", 1, minimum=1)
PASSWORD_HASHERS = [
    "apps.accounts.passwords.hashers.AppwriteArgon2Hasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    # Hashes imported from other systems (Users API, manage.py importusers): verified at sign-in,
    # then replaced by argon2 (apps/accounts/passwords/hashers.py).
    "apps.accounts.passwords.hashers.BcryptHasher",
    "apps.accounts.passwords.hashers.MD5Hasher",
    "apps.accounts.passwords.hashers.ShaHasher",
    "apps.accounts.passwords.hashers.PHPassHasher",
    "apps.accounts.passwords.hashers.ScryptHasher",
    "apps.accounts.passwords.hashers.ScryptModifiedHasher",
]

# Staff passwords (the Django admin's accounts: createsuperuser, changepassword, the admin's
# password forms). Product users have their own per-project policy (apps/accounts/passwords/policy.py).
# 12 characters: these accounts can read and change every project's data.
STAFF_PASSWORD_MIN_LENGTH = 12
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": STAFF_PASSWORD_MIN_LENGTH}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Accounts ---------------------------------------------------------------------------------
SESSION_DURATION = _env_int("SESSION_DURATION", 31536000, minimum=60)  # seconds (Appwrite default)
JWT_DEFAULT_DURATION = 900  # seconds

# --- OAuth2 / OpenID Connect sign-in (apps.accounts.oauth2; docs/oauth2.md) -----------------------
# Keys that encrypt provider client secrets and provider tokens at rest (Fernet keys, comma
# separated, newest first: the first encrypts, all of them decrypt, so a key can be rotated with
# `manage.py oauthprovider --rotate-keys`). Unset: one key derived from SECRET_KEY.
OAUTH2_SECRET_KEYS = _env_list("OAUTH2_SECRET_KEYS", [])
for _key in OAUTH2_SECRET_KEYS:
    try:
        from cryptography.fernet import Fernet

        Fernet(_key)
    except (ValueError, TypeError):
        raise ImproperlyConfigured(
            "OAUTH2_SECRET_KEYS must hold Fernet keys (32 url-safe base64 bytes each), e.g. from "
            "`python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'`."
        ) from None
# The scheme://host[:port] providers send users back to (the callback URL registered with them:
# <base>/v1/account/sessions/oauth2/callback/<provider>/<projectId>), when it is not PUBLIC_URL.
# Unset: PUBLIC_URL. Never the request's Host.
OAUTH2_CALLBACK_BASE = _env("OAUTH2_CALLBACK_BASE").rstrip("/")
if OAUTH2_CALLBACK_BASE:
    from urllib.parse import urlsplit as _urlsplit

    _parts = _urlsplit(OAUTH2_CALLBACK_BASE)
    if _parts.scheme not in ("http", "https") or not _parts.netloc or _parts.path or _parts.query:
        raise ImproperlyConfigured(f"OAUTH2_CALLBACK_BASE must be scheme://host[:port], got {OAUTH2_CALLBACK_BASE!r}")
# Seconds one call to a provider (discovery, token, user info, keys) may take before the sign-in
# fails with a clear error; seconds a started sign-in may take to come back from the provider.
OAUTH2_HTTP_TIMEOUT = _env_float("OAUTH2_HTTP_TIMEOUT", 10.0, positive=True)
OAUTH2_STATE_TTL = _env_int("OAUTH2_STATE_TTL", 900, minimum=60)
# Seconds a fetched discovery document or key set is reused (an unknown key ID refetches at once).
OAUTH2_METADATA_TTL = _env_int("OAUTH2_METADATA_TTL", 3600, minimum=0)
