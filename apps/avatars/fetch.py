"""Fetching remote images and pages for the Avatars service, safe against server-side request
forgery (SSRF) and against oversized or slow answers.

* Only ``http``/``https`` URLs. The host is resolved once and **every** resolved address must be
  public: loopback, private (RFC 1918, ULA), link-local, carrier-grade NAT (RFC 6598), shared,
  documentation, benchmarking, multicast, reserved and unspecified ranges are refused, and so are
  IPv4-mapped, 6to4, Teredo and NAT64 addresses that embed one of them (Appwrite's
  ``PublicHostname`` rule). ``AVATARS_FETCH_ALLOW_NETWORKS`` exempts named networks (tests).
* The connection goes to the address that was checked, not to a second resolution of the name,
  so a DNS answer that changes between check and connect (DNS rebinding) cannot reach an
  internal address. ``Host`` and the TLS server name stay the requested host name.
* Redirects are followed only when asked (``max_redirects``), each hop checked the same way.
* One deadline (``AVATARS_FETCH_TIMEOUT`` seconds) covers every hop, and the body is read up to
  ``AVATARS_FETCH_MAX_BYTES``: a larger one is refused, not truncated.

Blocking (``http.client``): call through ``run_blocking``.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from functools import cache
from urllib.parse import urljoin, urlsplit

from django.conf import settings

USER_AGENT = "Mozilla/5.0 (compatible; AppwriteCompatibleAvatars/1.0)"


class FetchRefused(Exception):
    """The URL may not be fetched (scheme, host, address, too many redirects), or the fetch
    failed (timeout, connection error, body too large). The message is safe to show."""


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # the final URL, after redirects
    status: int
    content_type: str
    body: bytes


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


@cache
def _allowed_networks() -> tuple:
    return tuple(ipaddress.ip_network(n, strict=False) for n in settings.AVATARS_FETCH_ALLOW_NETWORKS)


def is_public_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """True when ``address`` is globally routable and embeds no non-public IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = []
        if address.ipv4_mapped:
            embedded.append(address.ipv4_mapped)
        if address.sixtofour:
            embedded.append(address.sixtofour)
        if address.teredo:
            embedded.extend(address.teredo)
        if address in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if address in _NAT64_LOCAL:
            return False
        if any(not is_public_address(inner) for inner in embedded):
            return False
    if address in _CGNAT:
        return False
    return address.is_global and not address.is_multicast and not address.is_reserved


def address_allowed(address) -> bool:
    return is_public_address(address) or any(address in net for net in _allowed_networks())


def resolve(host: str, port: int) -> list[tuple[int, tuple]]:
    """``[(family, sockaddr)]`` of ``host`` (getaddrinfo). Raises :class:`FetchRefused`."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise FetchRefused(f"Hostname '{host}' cannot be resolved.") from None
    return [(family, sockaddr) for family, _, _, _, sockaddr in infos]


def _checked_addresses(host: str, port: int, resolver) -> list[tuple[int, tuple]]:
    addresses = resolver(host, port)
    if not addresses:
        raise FetchRefused(f"Hostname '{host}' has no address.")
    for _, sockaddr in addresses:
        ip = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if not address_allowed(ip):
            raise FetchRefused(f"Hostname '{host}' resolves to a non-public address.")
    return addresses


class PinnedConnection(http.client.HTTPConnection):
    """An HTTP connection to fixed, already-checked socket addresses (``[(family, sockaddr)]``,
    tried in order); ``Host`` stays ``host``. Also used by webhook deliveries (apps.webhooks)."""

    def __init__(self, host, port, sockaddrs, timeout):
        super().__init__(host, port, timeout=timeout)
        self._sockaddrs = sockaddrs

    def connect(self):
        last = None
        for family, sockaddr in self._sockaddrs:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            self.sock = sock
            return
        raise last or OSError("no address to connect to")


class PinnedTLSConnection(PinnedConnection):
    """:class:`PinnedConnection` over TLS with ``host`` as the server name; ``verify=False``
    accepts any certificate (a webhook without ``tls``)."""

    def __init__(self, host, port, sockaddrs, timeout, verify: bool = True):
        super().__init__(host, port, sockaddrs, timeout)
        self._verify = verify

    def connect(self):
        super().connect()
        context = ssl.create_default_context()
        if not self._verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        self.sock = context.wrap_socket(self.sock, server_hostname=self.host)


def fetch(url: str, *, max_redirects: int = 0, resolver=resolve) -> Fetched:
    """GET ``url`` under the rules of the module docstring. A 3xx answer is returned as is when
    ``max_redirects`` is 0; otherwise followed up to that many hops. Raises
    :class:`FetchRefused`. ``resolver`` is the name resolution (``(host, port) -> [(family,
    sockaddr)]``); tests pass their own to play DNS answers."""
    deadline = time.monotonic() + settings.AVATARS_FETCH_TIMEOUT
    for _hop in range(max_redirects + 1):
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise FetchRefused(f"Scheme '{scheme}' is not allowed.")
        host = parts.hostname
        if not host:
            raise FetchRefused("URL has no host.")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise FetchRefused("URL has an invalid port.") from None
        sockaddrs = _checked_addresses(host, port, resolver)
        response = _get(scheme, host, port, sockaddrs, parts, deadline)
        if 300 <= response.status < 400 and response.location and max_redirects:
            url = urljoin(url, response.location)
            continue
        return Fetched(url, response.status, response.content_type, response.body)
    raise FetchRefused("Too many redirects.")


@dataclass(slots=True)
class _Raw:
    status: int
    content_type: str
    location: str
    body: bytes


def _get(scheme, host, port, sockaddrs, parts, deadline) -> _Raw:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchRefused("The remote server took too long.")
    cls = PinnedTLSConnection if scheme == "https" else PinnedConnection
    conn = cls(host, port, sockaddrs, timeout=remaining)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    limit = settings.AVATARS_FETCH_MAX_BYTES
    try:
        conn.request("GET", path, headers={"User-Agent": USER_AGENT, "Accept": "*/*", "Accept-Encoding": "identity"})
        # getresponse() drops conn.sock when the answer closes the connection (HTTP/1.0,
        # ``Connection: close``): the response keeps reading from this socket, so hold it here.
        sock = conn.sock
        response = conn.getresponse()
        declared = response.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise FetchRefused("The remote file is too large.")
        chunks, size = [], 0
        while True:
            if time.monotonic() > deadline:
                raise FetchRefused("The remote server took too long.")
            if response.isclosed():  # the whole body was read and the socket released
                break
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise FetchRefused("The remote file is too large.")
            chunks.append(chunk)
        return _Raw(response.status, response.getheader("Content-Type", "") or "",
                    response.getheader("Location", "") or "", b"".join(chunks))
    except FetchRefused:
        raise
    except TimeoutError:
        raise FetchRefused("The remote server took too long.") from None
    except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
        raise FetchRefused(f"The remote server could not be reached ({exc.__class__.__name__}).") from None
    finally:
        conn.close()
