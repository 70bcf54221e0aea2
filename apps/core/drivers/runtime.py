"""Running the shared async handlers in both deployments.

Endpoint handlers are ``async def`` functions. Under ASGI they run on the server's event loop
with native async drivers. Under WSGI the same coroutines are driven by :func:`run_sync`, which
steps them without any event loop: every driver in sync mode is a coroutine that does its work
synchronously and never suspends, so one ``send(None)`` completes the handler. No loop and no
thread is created per request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

ASYNC = "async"
SYNC = "sync"

# Threads for blocking CPU or file work under ASGI (password hashing, file I/O). Created once per
# process and reused; argon2 releases the GIL, so two cores hash in parallel.
_executor: ThreadPoolExecutor | None = None


def current_task() -> asyncio.Task[Any]:
    """The task running this coroutine (a request's work is always one); ``RuntimeError`` outside one."""
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("not inside a task")
    return task


class SuspendedInSyncMode(RuntimeError):
    """A handler awaited a real future while driven by :func:`run_sync` (a driver bug)."""


def run_sync[T](coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion without an event loop; it must never suspend.

    Raises :class:`SuspendedInSyncMode` if the coroutine yields (it awaited something that
    needs a loop), after closing it.
    """
    try:
        coro.send(None)
    except StopIteration as stop:
        result: T = stop.value
        return result
    coro.close()
    raise SuspendedInSyncMode("an async-only operation was awaited in sync (WSGI) mode")


def _get_executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="blocking")
    return _executor


async def run_blocking[T](mode: str, fn: Callable[..., T], *args: Any) -> T:
    """Run blocking ``fn(*args)``: inline in sync mode, on the shared executor in async mode."""
    if mode == SYNC:
        return fn(*args)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_get_executor(), fn, *args)


async def sleep(mode: str, seconds: float) -> None:
    """Wait ``seconds``: ``asyncio.sleep`` under ASGI, ``time.sleep`` under WSGI."""
    if mode == SYNC:
        time.sleep(seconds)
    else:
        await asyncio.sleep(seconds)


def return_large_blocks(threshold: int = 1024 * 1024) -> bool:
    """Make glibc serve allocations of ``threshold`` bytes and more with ``mmap``, so they go
    back to the system when freed (True when set; other C libraries: False, nothing done).

    Setting ``M_MMAP_THRESHOLD`` also turns off glibc's dynamic threshold, which rises to the
    size of the largest block freed: after one image preview, Pillow's 16 MB pixel blocks came
    from the thread's heap and stayed there, and each executor thread kept its own heap, so a
    process held several renders' peaks at once (about 1.3 GB for ten 40 Mpx previews;
    ``apps/storage/tests/test_preview_memory.py``). Allocations this large are rare on the
    request path (spooled bodies are written in pieces)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = libc.mallopt if libc is not None else None
    except (OSError, AttributeError):
        return False
    if mallopt is None:
        return False
    m_mmap_threshold = -3  # <malloc.h>
    return bool(mallopt(m_mmap_threshold, threshold))



# --- background services of an ASGI process --------------------------------------------------------

_services: list[tuple[Callable[[], None], Callable[[], Coroutine[Any, Any, None]]]] = []


def serve_in_background(start: Callable[[], None], stop: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Register a background service of every ASGI process (apps call it in ``AppConfig.ready``):
    ``start()`` runs on the server's event loop at lifespan startup (it creates its tasks and
    returns), ``await stop()`` at lifespan shutdown, before the database and Redis pools close.
    WSGI processes run none."""
    if (start, stop) not in _services:
        _services.append((start, stop))


def start_services() -> None:
    """Start every registered service (lifespan startup)."""
    for start, _ in _services:
        start()


async def stop_services() -> None:
    """Stop every registered service, last started first (lifespan shutdown)."""
    for _, stop in reversed(_services):
        await stop()
