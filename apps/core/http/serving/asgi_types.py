"""The ASGI callables' shapes as this package uses them (ASGI 3: ``app(scope, receive, send)``).

Plain aliases over dicts rather than asgiref's TypedDict unions: the adapters read scopes and
messages by key and pass them on unchanged, and each server (uvicorn, daphne, granian) adds keys
of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
