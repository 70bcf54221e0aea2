"""Session cookies and the ``X-Fallback-Cookies`` header."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import orjson

from apps.accounts.credentials.authn import session_cookie_name
from apps.core.http.context import Cookie, Response


def _registrable(host: str) -> str:
    """The host's registrable domain, simplified: IPs and one-label hosts stay whole, other
    names keep their last two labels (no public-suffix list)."""
    host = host.split(":", 1)[0].strip("[]").lower()
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    labels = host.split(".")
    return ".".join(labels[-2:]) if len(labels) >= 2 else host


def needs_fallback(ctx) -> bool:
    """True unless the Origin (or Referer) shares the API host's registrable domain."""
    source = ctx.headers.get("origin") or ctx.headers.get("referer") or ""
    if not source:
        return True
    return _registrable(urlsplit(source).netloc) != _registrable(ctx.host)


def set_session_cookies(ctx, response: Response, token: str, expires: int) -> None:
    """Attach ``a_session_<p>`` (SameSite=None) and ``a_session_<p>_legacy`` cookies."""
    name = session_cookie_name(ctx.project_id)
    secure = ctx.scheme == "https"
    response.cookies.append(Cookie(name, token, expires, samesite="None", secure=secure))
    response.cookies.append(Cookie(name + "_legacy", token, expires, secure=secure))
    if needs_fallback(ctx):
        response.headers.append(("X-Fallback-Cookies", orjson.dumps({name: token}).decode()))


def clear_session_cookies(ctx, response: Response) -> None:
    """Expire both session cookies and send ``X-Fallback-Cookies: []`` (logout)."""
    name = session_cookie_name(ctx.project_id)
    secure = ctx.scheme == "https"
    response.cookies.append(Cookie(name, "", 0, samesite="None", secure=secure))
    response.cookies.append(Cookie(name + "_legacy", "", 0, secure=secure))
    response.headers.append(("X-Fallback-Cookies", "[]"))
