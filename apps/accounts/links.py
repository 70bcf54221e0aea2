"""Links that mails carry: which redirect URLs a project accepts, and adding the token to one.

Appwrite's ``Redirect`` validator (``src/Appwrite/Network/Validator/Redirect.php``): an http(s)
URL must point at a host registered as a web platform of the project (``*.example.com``
wildcards allowed) or at the API's own host; the only other schemes are ``exp`` (Expo) and
``appwrite-callback-<projectId>``. Anything else is an open-redirect risk and is refused.
"""

from __future__ import annotations

import fnmatch
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from apps.core.errors import invalid_argument
from apps.projects.selectors import platform_origins

_REFUSED = ("Invalid URI. Register your new client ({host}) as a new Web platform on your project "
            "console dashboard")


def _hostname(value: str) -> str:
    try:
        return (urlsplit(value).hostname or "").lower()
    except ValueError:
        return ""


async def redirect_check(ctx, url: str, param: str = "url") -> None:
    """Refuse ``url`` unless the project may redirect there.

    Raises 400 ``general_argument_invalid`` (``Invalid `<param>` param: Invalid URI...``).
    """
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        raise invalid_argument(param, _REFUSED.format(host=url[:64])) from None
    scheme = parts.scheme.lower()
    if scheme in ("exp", f"appwrite-callback-{ctx.project_id}".lower()):
        return
    if scheme not in ("http", "https") or not host:
        raise invalid_argument(param, _REFUSED.format(host=host or url[:64]))
    if host == _hostname(f"http://{ctx.host}"):
        return
    for origin in await platform_origins(ctx, ctx.project["id"]):
        if origin == "*":
            return
        allowed = _hostname(origin)
        if allowed and (host == allowed or ("*" in allowed and fnmatch.fnmatchcase(host, allowed))):
            return
    raise invalid_argument(param, _REFUSED.format(host=host))


def url_with(url: str, params: dict[str, str]) -> str:
    """``url`` with ``params`` added to its query (replacing parameters of the same name)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    return urlunsplit(parts._replace(query=urlencode([*query, *params.items()])))
