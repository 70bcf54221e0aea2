"""Admin static files (WhiteNoise) without breaking the async /v1 middleware chain.

``WhiteNoiseMiddleware`` is sync-only. Below the async /v1 adapter it would make Django build a
sync chain under ASGI, and the /v1 adapter (sync- and async-capable) would then run in sync mode
in a thread for every request. This subclass is async-capable: under ASGI it looks the file up
on the loop and otherwise awaits the next middleware.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):  # type: ignore[misc]  # whitenoise has no type hints
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[..., Any] | None = None, *args: Any, **kwargs: Any) -> None:
        with warnings.catch_warnings():
            if settings.WHITENOISE_USE_FINDERS:  # development: assets come from the apps, so a
                # missing STATIC_ROOT (no collectstatic yet) is expected, not worth a warning
                warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
            super().__init__(get_response, *args, **kwargs)
        self._is_async = iscoroutinefunction(get_response)
        if self._is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self._is_async:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request: HttpRequest) -> Any:
        if self.autorefresh:
            static_file = self.find_file(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return _in_memory(self.serve(static_file, request))
        return await self.get_response(request)


def _in_memory(response: Any) -> Any:
    """WhiteNoise's file response with its body read (an admin asset: kilobytes). Django's ASGI
    handler would read the file's sync iterator whole anyway, warning on every asset that
    ``StreamingHttpResponse must consume synchronous iterators``; 304s and HEADs pass as they are."""
    if not response.streaming:
        return response
    try:
        body = b"".join(response.streaming_content)
    finally:
        response.close()
    plain = HttpResponse(body, status=response.status_code)
    for name, value in response.items():
        plain[name] = value
    return plain
