"""CORS for web clients.

A project keeps a list of allowed web origins (Appwrite's web "platforms"). An allowed Origin is
echoed with credentials; the Appwrite request headers are allowed; ``X-Fallback-Cookies`` and the
rate-limit headers are exposed. Any other Origin gets no grant.
"""

from __future__ import annotations

from typing import Any

from apps.core.http import hosts
from apps.core.http.context import RequestContext, Response

ALLOW_HEADERS = ", ".join([
    "Origin", "Cookie", "Set-Cookie", "X-Requested-With", "Content-Type", "Accept", "Range",
    "Content-Range", "Cache-Control", "Expires", "Pragma", "X-Appwrite-Project", "X-Appwrite-Key",
    "X-Appwrite-Dev-Key", "X-Appwrite-Locale", "X-Appwrite-Mode", "X-Appwrite-JWT",
    "X-Appwrite-Response-Format", "X-Appwrite-Timeout", "X-Appwrite-Session", "X-Appwrite-ID",
    "X-Fallback-Cookies", "X-SDK-Version", "X-SDK-Name", "X-SDK-Language", "X-SDK-Platform",
    "X-SDK-Graphql", "X-Appwrite-Impersonate-User-Id", "X-Appwrite-Impersonate-User-Email",
    "X-Appwrite-Impersonate-User-Phone", "X-Forwarded-User-Agent",
])
EXPOSE_HEADERS = ", ".join([
    "X-Appwrite-Session", "X-Fallback-Cookies", "X-RateLimit-Limit", "X-RateLimit-Remaining",
    "X-RateLimit-Reset", "Retry-After", "Content-Range", "Accept-Ranges", "ETag", "X-Request-Id",
])
ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"


def grant_headers(origin: str) -> list[tuple[str, str]]:
    """The headers that grant ``origin`` access with credentials."""
    return [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Allow-Credentials", "true"),
        ("Access-Control-Expose-Headers", EXPOSE_HEADERS),
        ("Vary", "Origin"),
    ]


def same_origin(ctx: RequestContext, origin: str) -> bool:
    """True when ``origin`` is the API's own: ``PUBLIC_URL``, or the request's scheme and Host
    when ``ALLOWED_HOSTS`` restricts Host (checked before this runs). With ``ALLOWED_HOSTS=*`` a
    Host header proves nothing (a DNS-rebinding page sends its own), so only ``PUBLIC_URL`` counts."""
    if origin == hosts.public_origin():
        return True
    return hosts.host_checked() and origin == f"{ctx.scheme}://{ctx.host}"


async def preflight(ctx: RequestContext, origin: str, origin_checker: Any) -> Response:
    """Answer an ``OPTIONS`` preflight: 204, with a grant only for a known origin.

    The preflight carries no project header value, so an origin is known when it is the API's
    own, or is registered on the project named by ``?project=`` or, failing that, on any project.
    """
    response = Response(status=204, content_type="text/plain; charset=utf-8")
    if not origin:
        return response
    allowed = same_origin(ctx, origin) or await origin_checker(ctx, origin, None)
    if allowed:
        ctx.origin_allowed = True
        response.headers.extend([
            ("Access-Control-Allow-Methods", ALLOW_METHODS),
            ("Access-Control-Allow-Headers", ALLOW_HEADERS),
            ("Access-Control-Max-Age", "86400"),
        ])
    return response
