"""The admin's sign-in throttle: failed staff sign-ins at ``/admin/login/`` are limited per client
IP and per username, on the API's own limiter.

Rule ``admin.login`` of :mod:`apps.abuse.rules` (default 10 failed sign-ins per 15 minutes, per
counter; tuned with ``ABUSE_LIMITS`` / ``ABUSE_LIMIT_MULTIPLIER``, off with ``ABUSE_ENABLED=false``
or a limit of 0). The counters live where the API's do (:func:`apps.core.drivers.kv.get_kv`: Redis with
``REDIS_URL``, this process's memory otherwise), keyed by :func:`apps.abuse.services.counter_key`.
The client IP is :func:`apps.core.http.clientip.client_ip` (``TRUSTED_PROXIES``).

Only failed sign-ins count, and concurrent guesses cannot overshoot the limit: each attempt first
*reserves* one hit on both counters (one atomic round trip); the password is checked only if both
counts stay within the limit. A failed check keeps the hit; a good sign-in gives the IP's hit
back and clears the username's counter (the account's owner proved the password); a refused
attempt gives both hits back (it checked nothing). A good sign-in does not clear the IP's counter,
so one valid account cannot reset the budget for guessing others from the same address.

Store unavailable: ``fail_closed`` (the default) refuses the sign-in without checking the
password; with ``"fail": "open"`` the sign-in goes ahead uncounted.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from types import SimpleNamespace

from django.conf import settings

from apps.abuse.rules import Rule, rule_get
from apps.abuse.services import counter_key, retry_after_unavailable, store_hits
from apps.core.drivers.kv import get_kv
from apps.core.drivers.runtime import run_sync
from apps.core.http.clientip import client_ip

RULE = "admin.login"
# Counter scope: where the API puts a project ID. Project IDs never start with "_", so the
# admin's counters cannot collide with a project's.
SCOPE = "_admin"


class Refused(Exception):
    """The sign-in is refused before the password is checked.

    ``reason`` is ``"locked"`` (a counter is at its limit) or ``"unavailable"`` (the store cannot
    be reached and the rule fails closed); ``retry_after`` is in seconds.
    """

    def __init__(self, reason: str, retry_after: int):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


@dataclass
class Attempt:
    """One reserved sign-in attempt: ``keys`` are ``[ip counter, username counter]``; ``None``
    keys mean nothing was counted (throttle off, or the store failed open)."""

    rule: Rule | None
    keys: list[str] | None

    def failed(self) -> None:
        """The password was wrong (or the account may not sign in): the reserved hits stay."""

    def succeeded(self) -> None:
        """Signed in: give the IP's hit back and clear the username's counter."""
        if self.keys:
            _hits(self.rule, self.keys[:1], -1)
            run_sync(_delete(self.keys[1]))

    def abandoned(self) -> None:
        """Nothing was checked (an error while checking): give both hits back."""
        if self.keys:
            _hits(self.rule, self.keys, -1)


def begin(request, username: str) -> Attempt:
    """Reserve one failed sign-in for ``request``'s client IP and ``username``.

    Returns the :class:`Attempt` to settle once the password is checked. Raises
    :class:`Refused` when either counter is already at the rule's limit (the hits are given back)
    or when the store is unavailable and the rule fails closed.
    """
    if not settings.ABUSE_ENABLED:
        return Attempt(None, None)
    rule = rule_get(RULE)
    if rule.limit <= 0:
        return Attempt(None, None)
    ctx = SimpleNamespace(
        project_id=SCOPE,
        client_ip=client_ip(request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR")),
        raw_params={"username": normalize_username(username)},
    )
    keys = [counter_key(ctx, rule, parts) for parts in rule.keys]
    counts = _hits(rule, keys, 1)
    if counts is None:
        if rule.fail_closed:
            raise Refused("unavailable", retry_after_unavailable())
        return Attempt(None, None)
    over = [left_ms for count, left_ms in counts if count > rule.limit]
    if over:
        _hits(rule, keys, -1)
        raise Refused("locked", max(1, math.ceil(max(over) / 1000)))
    return Attempt(rule, keys)


def normalize_username(username: str) -> str:
    """The username a counter is kept for: NFKC (as Django's form does), trimmed, lower-cased, so
    case or spacing variants of one name share its budget whatever the database's collation."""
    return unicodedata.normalize("NFKC", username or "").strip().lower()


def _hits(rule: Rule, keys: list[str], add: int):
    return run_sync(store_hits(get_kv("sync"), rule, keys, add))


async def _delete(key: str) -> None:
    try:
        await get_kv("sync").delete(key)
    except Exception:  # the sign-in succeeded; a stale counter only expires later
        pass
