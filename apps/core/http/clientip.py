"""The client's IP and scheme: the socket's, or X-Forwarded-For / X-Forwarded-Proto when the peer
is a trusted proxy (``TRUSTED_PROXIES``)."""

from __future__ import annotations

import ipaddress
from functools import cache
from typing import Any

from django.conf import settings


@cache
def _trusted() -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in settings.TRUSTED_PROXIES)


def client_ip(peer: str, forwarded_for: str | None) -> str:
    """``peer`` unless it is in ``TRUSTED_PROXIES``; then the right-most untrusted address of
    ``X-Forwarded-For`` (a forged left part written by the client is skipped)."""
    nets = _trusted()
    if not forwarded_for or not nets or not _in(peer, nets):
        return peer
    for hop in reversed([h.strip() for h in forwarded_for.split(",") if h.strip()]):
        if not _in(hop, nets):
            try:
                ipaddress.ip_address(hop)
            except ValueError:
                return peer
            return hop
    return peer


def _in(addr: str, nets: tuple[Any, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return False
    return any(ip in net for net in nets)


def is_trusted_proxy(peer: str) -> bool:
    """True when ``peer`` (an IP address) is in ``TRUSTED_PROXIES``."""
    nets = _trusted()
    return bool(nets) and _in(peer, nets)


def client_scheme(peer: str, scheme: str, forwarded_proto: str | None) -> str:
    """``"https"`` or ``"http"`` as the client used it: the connection's ``scheme``, unless
    ``peer`` is a trusted proxy that says ``X-Forwarded-Proto: https|http`` (its first value,
    the hop nearest the client). Anything else in the header is ignored."""
    if not forwarded_proto or not is_trusted_proxy(peer):
        return scheme
    proto = forwarded_proto.split(",", 1)[0].strip().lower()
    return proto if proto in ("http", "https") else scheme
