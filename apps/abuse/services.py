"""The abuse check: the /v1 pipeline's ``V1_ABUSE_CHECK`` strategy.

Source: Appwrite 1.9.6 ``app/controllers/shared/api.php``. For an endpoint that names a rule
(``Endpoint(abuse=...)``, names in :mod:`apps.abuse.rules`), after auth and before the handler:

* one fixed-window counter per key of the rule is incremented, atomically and in one round trip
  (:meth:`apps.core.drivers.kv.KV.hit_windows`: a Lua script on Redis, a locked dict in memory);
* the response carries ``X-RateLimit-Limit``, ``X-RateLimit-Remaining`` (requests left in the
  window *after* this one; Appwrite reports the count before it) and ``X-RateLimit-Reset`` (unix
  seconds when the window ends), for the tightest counter, on success and error responses alike;
* past the limit: 429 ``general_rate_limit_exceeded`` with ``Retry-After`` (seconds), raised
  before the handler, so the request does nothing;
* API-key callers are never blocked and consume nothing: the counters are only read, for the
  headers (Appwrite exempts keys the same way);
* ``ABUSE_ENABLED=false`` (Appwrite's ``_APP_OPTIONS_ABUSE=disabled``) skips all of it.

Key-value store down (``KVUnavailable`` or any other store error): a ``fail_closed`` rule
(the password-checking routes, where an unthrottled oracle means unbounded guessing) answers 503
``general_service_unavailable`` with ``Retry-After``; every other rule lets the request through
without headers (availability first; those routes need a valid project and are cheap to serve).
Never a 500. After an error the store is skipped for ``ABUSE_KV_RETRY_SECONDS`` so an outage
costs no connect timeout per request; then the next check tries again (both Redis clients
reconnect on the next call, so recovery needs no restart). Warnings are logged at most once per
``ABUSE_LOG_INTERVAL`` seconds, with the number of checks affected meanwhile.

Nothing here suspends except the store call, so the same coroutine runs on the ASGI loop and
under :func:`apps.core.drivers.runtime.run_sync` on WSGI (the sync store never suspends).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Awaitable, Callable

from django.conf import settings

from apps.abuse.rules import CHUNK_ID, EMAIL, IP, METHOD, URL, USER_ID, Rule, rule_get
from apps.core.domain.throttle import Throttle
from apps.core.drivers.kv import KVUnavailable
from apps.core.errors import AppwriteError

log = logging.getLogger("apps.abuse")

After = Callable[[object], Awaitable[None]]

CHUNK_SIZE = 5 * 1024 * 1024  # bytes


async def abuse_check(ctx) -> After | None:
    """Count this request against the rule ``ctx.endpoint.abuse``; return a post-handler hook.

    ``ctx`` is the pipeline's RequestContext (project, auth, endpoint, raw params filled in).
    Adds the ``X-RateLimit-*`` headers to ``ctx.response_headers``. Returns an ``after(response)``
    coroutine function when the rule resets on some statuses, else ``None``.
    Raises 429 ``general_rate_limit_exceeded`` over the limit, 503
    ``general_service_unavailable`` for a fail-closed rule while the store is unreachable, and
    ``KeyError`` for a rule name that is not in the table (a declaration bug).
    """
    if not settings.ABUSE_ENABLED:
        return None
    rule = rule_get(ctx.endpoint.abuse)
    if rule.limit <= 0:
        return None
    exempt = ctx.auth.is_key
    keys = [counter_key(ctx, rule, parts) for parts in rule.keys]
    counts = await store_hits(ctx.kv, rule, keys, 0 if exempt else 1)
    if counts is None:
        if rule.fail_closed and not exempt:
            raise AppwriteError(
                "general_service_unavailable",
                "Rate limiting is temporarily unavailable for this endpoint. Please try again shortly.",
                headers={"Retry-After": str(retry_after_unavailable())},
            )
        return None

    count, left_ms = max(counts, key=lambda c: (c[0], c[1]))
    now = time.time()
    ctx.response_headers.extend([
        ("X-RateLimit-Limit", str(rule.limit)),
        ("X-RateLimit-Remaining", str(max(0, rule.limit - count))),
        ("X-RateLimit-Reset", str(math.ceil(now + left_ms / 1000))),
    ])
    if not exempt and count > rule.limit:
        raise AppwriteError(
            "general_rate_limit_exceeded", headers={"Retry-After": str(max(1, math.ceil(left_ms / 1000)))}
        )
    if rule.reset_on:
        return _resetter(ctx, rule, keys)
    return None


async def store_hits(kv, rule: Rule, keys: list[str], add: int) -> list[tuple[int, int]] | None:
    """``kv.hit_windows(keys, rule.window, add)`` through this process's memory of store failures.

    Returns one ``(count, milliseconds left in the window)`` per key, or ``None`` when the store
    is unavailable (the error is logged, rate-limited, and the store is skipped for
    ``ABUSE_KV_RETRY_SECONDS``); the caller applies ``rule.fail_closed``. Never raises for a
    store error. Shared by the /v1 check and the admin's sign-in throttle
    (``apps.adminsite.throttle``).
    """
    try:
        if _store.skipping():
            raise _Skipped
        counts = await kv.hit_windows(keys, rule.window, add)
    except Exception as exc:  # the store is down, slow, or misbehaving: never a 500
        _store.failed(exc, rule)
        return None
    _store.succeeded()
    return counts


def retry_after_unavailable() -> int:
    """Seconds to tell a client refused because the store is unavailable (``Retry-After``)."""
    return max(1, math.ceil(settings.ABUSE_KV_RETRY_SECONDS))


def _resetter(ctx, rule: Rule, keys: list[str]) -> After:
    async def after(response) -> None:
        if response.status in rule.reset_on:
            try:
                await ctx.kv.delete(*keys)
            except Exception as exc:  # the request succeeded; a stale counter only expires later
                _store.failed(exc, rule)

    return after


def counter_key(ctx, rule: Rule, parts: tuple[str, ...]) -> str:
    """The store key of one counter: ``abuse:<project id>:<rule>:<digest of the key parts>``.

    The parts' values are hashed so that long emails or IPv6 addresses give short keys.
    """
    raw = "\x1f".join(f"{part}={_part_value(ctx, part)}" for part in parts)
    digest = hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"abuse:{ctx.project_id}:{rule.name}:{digest}"


def _part_value(ctx, part: str) -> str:
    if part == URL:
        return "/v1" + ctx.endpoint.path
    if part == IP:
        return ctx.client_ip
    if part == USER_ID:  # the sender: an impersonator's requests count as theirs
        actor = ctx.auth.actor
        return actor["uid"] if actor else ""
    if part == METHOD:
        return ctx.method
    if part == EMAIL:
        value = ctx.raw_params.get("email", "")
        return str(value).strip().lower()
    if part == CHUNK_ID:
        return str(chunk_index(ctx.headers.get("content-range", "")))
    if part.startswith("param."):
        return str(ctx.raw_params.get(part[6:], ""))
    raise KeyError(f"unknown abuse key part {part!r}")


def chunk_index(content_range: str) -> int:
    """The upload chunk index of a ``Content-Range: bytes <start>-<end>/<total>`` header.

    ``start // CHUNK_SIZE`` (5 MiB, the SDKs' chunk size); 0 when the header is
    absent or malformed (the upload endpoint rejects a malformed one itself). Appwrite divides
    by this chunk's own length instead, which gives a short last chunk an index of its own.
    """
    try:
        unit, _, spec = content_range.strip().partition(" ")
        start, _, rest = spec.partition("-")
        start_i, end_i = int(start), int(rest.partition("/")[0])
    except ValueError:
        return 0
    if unit != "bytes" or start_i < 0 or end_i < start_i:
        return 0
    return start_i // CHUNK_SIZE


class _Skipped(Exception):
    """The store failed moments ago; not tried again yet."""


class _StoreHealth:
    """Per-process memory of store failures: the retry pause and the rate-limited warnings."""

    def __init__(self):
        self.down = False
        self.down_until = 0.0
        self.error = ""
        self.warnings = Throttle()
        self.reported = False

    def skipping(self) -> bool:
        return self.down and time.monotonic() < self.down_until

    def failed(self, exc: Exception, rule: Rule) -> None:
        now = time.monotonic()
        self.down = True
        if not isinstance(exc, _Skipped):
            self.down_until = now + max(0.0, settings.ABUSE_KV_RETRY_SECONDS)
            self.error = f"{type(exc).__name__}: {exc}"
        affected = self.warnings.hit(settings.ABUSE_LOG_INTERVAL)
        if affected is not None:
            log.warning(
                "abuse: key-value store unavailable (%s); %d check(s) affected since the last report; "
                "fail-closed rules answer 503, the others let requests through (last rule: %s)",
                self.error, affected, rule.name,
                exc_info=None if isinstance(exc, (KVUnavailable, _Skipped)) else exc,  # a bug: show it
            )
            self.reported = True

    def succeeded(self) -> None:
        if self.down:
            self.down = False
            if self.reported:  # one line per logged outage, so flapping stays rate-limited too
                log.warning("abuse: key-value store reachable again; rate limits enforced")
                self.reported = False


_store = _StoreHealth()
