"""The API's own address and the Host headers /v1 answers to.

The API's address comes from configuration (``PUBLIC_URL``), never from a request: a ``Host`` or
``X-Forwarded-Host`` header is written by the client, so a link built from it can point wherever
an attacker likes (a recovery mail carrying its secret to the attacker's site). ``ALLOWED_HOSTS``
is enforced on /v1 as Django enforces it on its own views (``django.http.HttpRequest.get_host``):
with a list other than ``*``, a request whose Host is not on it is refused with a JSON 400.
"""

from __future__ import annotations

from functools import cache
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from apps.core.errors import AppwriteError

_MAX_REMEMBERED = 1024  # distinct Host values whose answer is kept per process
_answers: dict[str, bool] = {}


@cache
def public_origin() -> str:
    """``scheme://host[:port]`` of ``PUBLIC_URL`` (no trailing slash)."""
    return settings.PUBLIC_URL


@cache
def public_hostname() -> str:
    """The lower-case hostname of ``PUBLIC_URL``."""
    return (urlsplit(settings.PUBLIC_URL).hostname or "").lower()


@cache
def _allowed() -> tuple[str, ...] | None:
    hosts = tuple(settings.ALLOWED_HOSTS)
    return None if "*" in hosts else hosts


def host_checked() -> bool:
    """True when ``ALLOWED_HOSTS`` restricts the Host header (is not ``*``)."""
    return _allowed() is not None


def host_allowed(host: str) -> bool:
    """True when ``host`` (a Host header value, port included) matches ``ALLOWED_HOSTS``
    (Django's patterns: exact names, ``.example.com`` for a domain and its subdomains, ``*``).
    A missing or malformed Host is refused whenever the list is not ``*``."""
    allowed = _allowed()
    if allowed is None:
        return True
    answer = _answers.get(host)
    if answer is None:
        domain, _port = split_domain_port(host)
        answer = bool(domain) and validate_host(domain, allowed)
        if len(_answers) < _MAX_REMEMBERED:
            _answers[host] = answer
    return answer


def host_check(host: str) -> None:
    """Raise 400 ``general_argument_invalid`` unless :func:`host_allowed`."""
    if not host_allowed(host):
        shown = host[:255].encode("ascii", "backslashreplace").decode() if host else "(none)"
        raise AppwriteError("general_argument_invalid",
                            f"Invalid Host header: this server does not answer to {shown!r}.")
