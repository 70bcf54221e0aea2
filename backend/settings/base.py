"""Reading the environment: typed readers that refuse bad values, the project root, ``APP_ENV``.

Every reader raises ``ImproperlyConfigured`` naming the variable and the value it got, so a bad
deployment stops at startup instead of misbehaving later.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent


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


def _env_number(name: str, cast, kind: str):
    """``cast`` of the variable's text, ``None`` when unset; raises naming ``kind``."""
    raw = _env(name)
    if not raw:
        return None
    try:
        return cast(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be {kind}, got {raw!r}") from None


def _env_int(name: str, default: int, minimum: int = 0) -> int:
    value = _env_number(name, int, "an integer")
    if value is None:
        return default
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def _env_float(name: str, default: float, *, positive: bool = False) -> float:
    """A finite number; ``positive`` refuses 0 and below (timeouts and lifetimes, where 0 would
    fail every call instead of meaning "off")."""
    value = _env_number(name, float, "a number")
    if value is None:
        return default
    if value != value or value in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {_env(name)!r}")
    if positive and value <= 0:
        raise ImproperlyConfigured(f"{name} must be > 0 (seconds), got {_env(name)!r}")
    return value


def _env_list(name: str, default: list[str]) -> list[str]:
    raw = _env(name)
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


APP_ENV = _env("APP_ENV", "development").lower()
if APP_ENV not in {"development", "production"}:
    raise ImproperlyConfigured(f"APP_ENV must be 'development' or 'production', got {APP_ENV!r}")
PRODUCTION = APP_ENV == "production"
