"""Believing a proxy's X-Forwarded-Proto only from the proxies named in ``TRUSTED_PROXIES``.

Django's ``SECURE_PROXY_SSL_HEADER`` trusts the header from anyone; this middleware, placed
before ``SecurityMiddleware``, removes it from requests whose peer is not a trusted proxy, so
the admin (CSRF origin checks, ``Secure`` cookies, HSTS) sees https only behind the real
load balancer. /v1 never passes through here: its adapters read the scheme with
:func:`apps.core.http.clientip.client_scheme`, which applies the same rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest

from apps.core.http.clientip import is_trusted_proxy

_HEADER = "HTTP_X_FORWARDED_PROTO"


def _strip_untrusted(request: HttpRequest) -> None:
    if _HEADER in request.META and not is_trusted_proxy(request.META.get("REMOTE_ADDR", "") or ""):
        del request.META[_HEADER]


class ForwardedProtoMiddleware:
    """Sync and async capable (no thread hop on either build)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[..., Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self.__acall__(request)
        _strip_untrusted(request)
        return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> Any:
        _strip_untrusted(request)
        return await self.get_response(request)
