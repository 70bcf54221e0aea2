"""One webhook POST, safe against DNS rebinding.

The URL's host is resolved **once**. In production (``APP_ENV=production``) every address it
resolves to must be public (the rule of the Avatars fetcher, :func:`apps.avatars.fetch.
is_public_address`: loopback, private, link-local... refused) or inside
``WEBHOOK_ALLOW_NETWORKS``; then the connection goes to those very addresses
(:class:`apps.avatars.fetch.PinnedConnection`), never to a second resolution of the name that
could answer an internal address. ``Host`` and the TLS server name stay the URL's host name.
Redirects are not followed (Appwrite's worker does not either).

Blocking (``http.client``); the worker calls it.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings

from apps.avatars.fetch import FetchRefused, PinnedConnection, PinnedTLSConnection, is_public_address, resolve

MAX_READ = 64 * 1024  # bytes of the receiver's answer read (the log keeps the first 10 000 characters)

Resolver = Callable[[str, int], list[tuple[int, tuple]]]


def refused_address(host: str, addresses: list[tuple[int, tuple]]) -> str:
    """Why ``host``, resolved to ``addresses``, may not be called (production only), or ``""``."""
    if not settings.PRODUCTION:
        return ""
    allowed = [ipaddress.ip_network(n, strict=False) for n in settings.WEBHOOK_ALLOW_NETWORKS]
    for _, sockaddr in addresses:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if not is_public_address(address) and not any(address in net for net in allowed):
            return f"Webhook target {host} rejected: not a public address."
    return ""


def post(url: str, body: bytes, headers: dict[str, str], *, verify: bool, auth: tuple[str, str] | None,
         timeout: float, resolver: Resolver = resolve) -> tuple[int, str, str]:
    """POST ``body`` to ``url``: ``(status, answer text, client error)``, status 0 when there was
    no answer. ``auth``: HTTP basic credentials; ``verify``: check the TLS certificate;
    ``resolver``: ``(host, port) -> [(family, sockaddr)]`` (tests play DNS answers with it)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme not in ("http", "https") or not host:
        return 0, "", f"Webhook URL {url} is not an http(s) URL with a host."
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return 0, "", f"Webhook URL {url} has an invalid port."
    try:
        addresses = resolver(host, port)
    except FetchRefused:
        addresses = []
    if not addresses:
        return 0, "", f"Webhook target {host} cannot be resolved."
    refused = refused_address(host, addresses)
    if refused:
        return 0, "", refused
    conn: PinnedConnection = (PinnedTLSConnection(host, port, addresses, timeout, verify=verify) if scheme == "https"
                              else PinnedConnection(host, port, addresses, timeout))
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # Header values as UTF-8 bytes, line breaks as spaces: a webhook's name may be any text (as
    # Appwrite's worker, which sends it as it is), and never a second header. http.client would
    # raise for a character outside Latin-1 or a line break, outside the failure accounting.
    sent: dict[str, str | bytes] = {name: value.replace("\r", " ").replace("\n", " ").encode()
                                    for name, value in headers.items()}
    if auth is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    try:
        conn.request("POST", path, body=body, headers=sent)
        response = conn.getresponse()
        chunks, size = [], 0
        while size < MAX_READ:
            chunk = response.read(MAX_READ - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        charset = response.headers.get_content_charset() or "utf-8"
        try:
            text = b"".join(chunks).decode(charset, "replace")
        except LookupError:  # an unknown charset name
            text = b"".join(chunks).decode("utf-8", "replace")
        return response.status, text, ""
    except (OSError, http.client.HTTPException, ssl.SSLError, ValueError) as exc:  # ValueError: a path not in ASCII
        return 0, "", f"{type(exc).__name__}: {exc}"[:1000]
    finally:
        conn.close()
