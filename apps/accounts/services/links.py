"""Where the server may send a browser: the redirect URLs a project accepts (mailed links,
invitations, OAuth2 ``success``/``failure``), and adding parameters to one.

Appwrite's ``Redirect`` validator (``src/Appwrite/Network/Validator/Redirect.php``): an http(s)
URL must point at a host registered as a web platform of the project (``*.example.com``
wildcards allowed) or at the API's own host (here: ``PUBLIC_URL``'s, never the request's); the only other schemes are ``exp`` (Expo) and
``appwrite-callback-<projectId>``. Anything else is an open-redirect risk and is refused.
"""

from __future__ import annotations

import fnmatch
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from apps.core.errors import invalid_argument, unregistered_client
from apps.core.http.hosts import public_hostname
from apps.projects.selectors import platform_origins

_UNSAFE = re.compile(r"[\\\x00-\x20\x7f]")  # read differently by browsers and Python: refused
MAX_LENGTH = 2048


def _hostname(value: str) -> str:
    try:
        return (urlsplit(value).hostname or "").lower()
    except ValueError:
        return ""


async def redirect_allowed(ctx, url: str, api_host: str = "") -> bool:
    """True when the project may send a browser (or a mailed link) to ``url``: an http(s) URL on
    the hostname of one of its web platforms (``*.example.com`` wildcards, any port) or of this
    API (``api_host``, a configured hostname; default ``PUBLIC_URL``'s, never the request's Host), or the ``exp`` / ``appwrite-callback-<projectId>``
    schemes of native apps. URLs with backslashes, control characters or spaces, user info, a bad
    port or more than 2048 characters are refused outright."""
    if not url or len(url) > MAX_LENGTH or _UNSAFE.search(url):
        return False
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme in ("exp", f"appwrite-callback-{ctx.project_id}".lower()):
        return True
    host = (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host or not port_ok or parts.username is not None:
        return False
    if host == (api_host or public_hostname()):
        return True
    for origin in await platform_origins(ctx, ctx.project["id"]):
        if origin == "*":
            return True
        allowed = _hostname(origin)
        if allowed and (host == allowed or ("*" in allowed and fnmatch.fnmatchcase(host, allowed))):
            return True
    return False


async def redirect_check(ctx, url: str, param: str = "url") -> None:
    """Refuse ``url`` unless :func:`redirect_allowed`.

    Raises 400 ``general_argument_invalid`` (``Invalid `<param>` param: Invalid URI...``).
    """
    if not await redirect_allowed(ctx, url):
        raise invalid_argument(param, unregistered_client("URI", _hostname(url) or url[:64], ctx.project_id))


def url_with(url: str, params: dict[str, str]) -> str:
    """``url`` with ``params`` added to its query (replacing parameters of the same name)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    return urlunsplit(parts._replace(query=urlencode([*query, *params.items()])))
