"""What a log entry says about the client: user agent and country (Appwrite's Log fields).

User agents are parsed with ua-parser (the maintained Python port of uap-core, the rules behind
BrowserScope) when a log is read; parses are cached per process. ua-parser names the browser,
the operating system and the device's brand and model; it has no client or OS codes, no engine
and no device kind, so ``osCode``, ``clientCode``, ``clientEngine``, ``clientEngineVersion`` and
``deviceName`` stay empty, and ``clientType`` is ``browser`` when a browser was recognised.
"""

from __future__ import annotations

from functools import lru_cache


def _version(*parts) -> str:
    return ".".join(p for p in parts if p)


@lru_cache(maxsize=4096)
def describe(user_agent: str) -> dict[str, str]:
    """The ``os*``, ``client*`` and ``device*`` fields of Appwrite's Log model for a
    ``User-Agent`` value (all ``""`` when nothing is recognised)."""
    from ua_parser import parse

    result = parse(user_agent or "")
    ua, os, device = result.user_agent, result.os, result.device
    return {
        "osCode": "",
        "osName": os.family if os else "",
        "osVersion": _version(os.major, os.minor, os.patch) if os else "",
        "clientType": "browser" if ua else "",
        "clientCode": "",
        "clientName": ua.family if ua else "",
        "clientVersion": _version(ua.major, ua.minor, ua.patch) if ua else "",
        "clientEngine": "",
        "clientEngineVersion": "",
        "deviceName": "",
        "deviceBrand": (device.brand or "") if device else "",
        "deviceModel": (device.model or "") if device else "",
    }


def country(ip: str) -> tuple[str, str]:
    """``(countryCode, countryName)`` of an IP address from the offline database named by
    ``GEOIP_DATABASE`` (``apps.core.domain.geo``); ``("--", "Unknown")`` without one or for an address
    it cannot place, as Appwrite answers."""
    from apps.core.domain.geo import country_of

    return country_of(ip)
