"""IP address -> country, offline, from a MaxMind-DB country database.

``GEOIP_DATABASE`` names an ``.mmdb`` file (DB-IP Lite Country, GeoLite2-Country, IPinfo Lite,
ip-location-db... any MaxMind-DB country database). Unset, or for addresses the database does not
know (private, loopback, unallocated), the country is unknown: code ``"--"`` as Appwrite answers.
Country names come from the Unicode CLDR through Babel, in any locale Babel knows.

One reader is opened per process, on first use, and memory-maps the file (maxminddb's C
extension): a lookup is a few microseconds and allocates no per-request buffers.
"""

from __future__ import annotations

import ipaddress
import logging
from functools import cache, lru_cache
from typing import Any

from django.conf import settings

log = logging.getLogger("apps.core.domain.geo")

UNKNOWN_CODE = "--"


@cache
def _reader() -> Any:
    """The open database reader, or ``None`` (no ``GEOIP_DATABASE``, or it cannot be read: logged
    once, and every lookup answers unknown instead of failing requests)."""
    path = settings.GEOIP_DATABASE
    if not path:
        return None
    try:
        import maxminddb

        return maxminddb.open_database(path, maxminddb.MODE_MMAP_EXT)
    except (OSError, ValueError) as exc:  # missing file, or not a MaxMind DB
        log.error("GEOIP_DATABASE %s cannot be read (%s); every IP is reported as unknown", path, exc)
        return None


def _code_in(record: Any) -> str | None:
    """The ISO 3166-1 alpha-2 code of a database record, in either common layout:
    ``{"country": {"iso_code": "DE"}}`` (MaxMind, DB-IP) or ``{"country_code": "DE"}``
    (ip-location-db, IPinfo Lite)."""
    if not isinstance(record, dict):
        return None
    country = record.get("country")
    code = country.get("iso_code") if isinstance(country, dict) else None
    code = code or record.get("country_code")
    if isinstance(code, str) and len(code) == 2 and code.isalpha():
        return code.upper()
    return None


@lru_cache(maxsize=4096)
def country_code_of(ip: str) -> str | None:
    """The upper-case ISO 3166-1 alpha-2 code of ``ip`` (IPv4 or IPv6 text), or ``None`` when
    there is no database, the address is malformed, or the database does not place it."""
    reader = _reader()
    if reader is None or not ip:
        return None
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped:
        address = address.ipv4_mapped
    try:
        return _code_in(reader.get(address))
    except ValueError:  # an IPv6 address against an IPv4-only database
        return None


def unknown_name(locale: str = "en") -> str:
    """What an unknown country is called: Appwrite's ``"Unknown"`` in English, CLDR's name of the
    unknown region (``ZZ``) in other locales."""
    if locale.split("_")[0] == "en":
        return "Unknown"
    from babel import Locale

    return str(Locale.parse(locale).territories.get("ZZ", "Unknown"))


def country_name(code: str, locale: str = "en") -> str:
    """The CLDR name of the country ``code`` (ISO alpha-2) in ``locale`` (a Babel identifier such
    as ``de`` or ``pt_BR``); :func:`unknown_name` for codes CLDR does not know."""
    from babel import Locale

    return Locale.parse(locale).territories.get(code.upper()) or unknown_name(locale)


def country_of(ip: str, locale: str = "en") -> tuple[str, str]:
    """``(code, name)`` of the country of ``ip``: e.g. ``("DE", "Germany")``, or
    ``("--", "Unknown")`` when it cannot be told (see the module docstring)."""
    code = country_code_of(ip)
    if code is None:
        return UNKNOWN_CODE, unknown_name(locale)
    return code, country_name(code, locale)
