"""The small client-facing services: Locale (and the IP -> country database), Avatars, Health."""

from __future__ import annotations

import ipaddress

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import BASE_DIR, _env, _env_float, _env_int, _env_list

# --- Locale and IP geolocation (apps.core.domain.geo, apps.locale; docs/locale-avatars-health.md) --------
# A MaxMind-DB (.mmdb) country database; empty = every IP is reported as unknown ("--").
GEOIP_DATABASE = _env("GEOIP_DATABASE")
# The locale of names when a request names none (X-Appwrite-Locale / ?locale=); Appwrite's
# _APP_LOCALE. Any identifier the Unicode CLDR knows: en, de, pt-BR, zh-TW...
LOCALE_DEFAULT = _env("LOCALE_DEFAULT", "en")

# --- Avatars (apps.avatars; docs/locale-avatars-health.md) ----------------------------------------
# Remote images and favicons: the whole fetch (every redirect hop) must finish within the timeout
# (seconds) and its body must not exceed the size (bytes).
AVATARS_FETCH_TIMEOUT = _env_float("AVATARS_FETCH_TIMEOUT", 5.0, positive=True)
AVATARS_FETCH_MAX_BYTES = _env_int("AVATARS_FETCH_MAX_BYTES", 5 * 1024 * 1024, minimum=1024)
# Networks (CIDR) exempt from the refusal of private, loopback, link-local... addresses. Empty in
# production; the tests set 127.0.0.1/32 to fetch from local servers.
AVATARS_FETCH_ALLOW_NETWORKS = _env_list("AVATARS_FETCH_ALLOW_NETWORKS", [])
for _net in AVATARS_FETCH_ALLOW_NETWORKS:
    try:
        ipaddress.ip_network(_net, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"AVATARS_FETCH_ALLOW_NETWORKS: {_net!r} is not a network (CIDR)") from None
# /avatars/screenshots: the headless browser (a Chromium; Debian's package is `chromium`), by name
# on the PATH or as a path; empty turns screenshots off (503 general_service_disabled).
AVATARS_SCREENSHOT_BROWSER = _env("AVATARS_SCREENSHOT_BROWSER", "chromium")
# Seconds one screenshot may take, browser start included; then the browser is killed.
AVATARS_SCREENSHOT_TIMEOUT = _env_float("AVATARS_SCREENSHOT_TIMEOUT", 20.0, positive=True)
# The npm-installed icon sets (apps/avatars/assets: `npm ci` there installs them).
AVATARS_ICONS_DIR = _env("AVATARS_ICONS_DIR", str(BASE_DIR / "apps" / "avatars" / "assets" / "node_modules"))

# --- Health (apps.health; docs/locale-avatars-health.md) ------------------------------------------
# /v1/health/time asks this SNTP server (host or host:port, port 123 by default) for the time,
# waiting at most HEALTH_NTP_TIMEOUT seconds.
HEALTH_NTP_SERVER = _env("HEALTH_NTP_SERVER", "time.google.com")
HEALTH_NTP_TIMEOUT = _env_float("HEALTH_NTP_TIMEOUT", 5.0, positive=True)
# /v1/health/certificate: seconds for the TCP connect plus the TLS handshake.
HEALTH_CERTIFICATE_TIMEOUT = _env_float("HEALTH_CERTIFICATE_TIMEOUT", 10.0, positive=True)
# The port /v1/health/certificate connects to (443; the tests use a local TLS server).
HEALTH_CERTIFICATE_PORT = _env_int("HEALTH_CERTIFICATE_PORT", 443, minimum=1)
# Where /v1/health/queue/* read queue sizes: the dotted path of a function
# ``(queue: str) -> (size, failed)``; empty = every queue is empty. The default counts the worker's task queue.
HEALTH_QUEUE_PROVIDER = _env("HEALTH_QUEUE_PROVIDER", "apps.core.tasks.queue.health_queue_stats")
# /v1/health/anti-virus: a ClamAV daemon as host:port (TCP); empty = antivirus "disabled".
ANTIVIRUS_CLAMD = _env("ANTIVIRUS_CLAMD", "")
ANTIVIRUS_TIMEOUT = _env_float("ANTIVIRUS_TIMEOUT", 5.0, positive=True)
