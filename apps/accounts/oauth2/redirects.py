"""Where a sign-in may send the browser back to: ``success`` and ``failure`` URLs.

Appwrite's redirect rule: an http(s) URL must have the hostname of one of the project's web
platforms (any port) or of this API itself; a native app may use the
``appwrite-callback-<projectId>`` scheme (or Expo's ``exp``). Anything else is an open redirect
and is refused. URLs that browsers and Python would read differently (backslashes, control
characters, spaces) are refused outright.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from apps.projects.selectors import platform_origins

_UNSAFE = re.compile(r"[\\\x00-\x20\x7f]")
MAX_LENGTH = 2048


def _hostname(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


async def redirect_allowed(ctx, url: str, api_base: str) -> bool:
    """True when ``url`` may receive the browser for ``ctx.project`` (``api_base`` is this API's
    public ``scheme://host[:port]``)."""
    if not url or len(url) > MAX_LENGTH or _UNSAFE.search(url):
        return False
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        host = parts.hostname
        if not host or not parts.netloc or not port_ok or parts.username is not None:
            return False
        if host == _hostname(api_base):
            return True
        for origin in await platform_origins(ctx, ctx.project["id"]):
            if origin == "*" or _hostname(origin) == host:
                return True
        return False
    return scheme in ("exp", f"appwrite-callback-{ctx.project['uid']}".lower())
