"""Local peers for the Locale, Avatars and Health tests, and servers that use them.

Registered as a pytest plugin by the root ``conftest.py``. Everything listens on loopback
addresses only (the machine has no outside network, and tests must never send traffic
elsewhere):

* ``ntp_peer``: a small SNTP responder (UDP) whose clock offset and silence the tests control;
* ``tls_peers``: TLS servers on one port, 127.0.0.1 with a valid self-signed certificate and
  127.0.0.3 with an expired one, certificates generated here with ``cryptography``;
* ``clamd_peer``: a responder speaking ClamAV's VERSION/PING protocol;
* ``origin``: an HTTP server for remote images and favicons (routes registered per test);
* ``geoip_db``: a MaxMind-DB country database written with ``mmdb-writer`` for documentation
  address ranges (198.51.100.0/24 DE, 203.0.113.0/24 US, 2001:db8::/32 FR);
* ``svc_server``: the three builds (ASGI lean, WSGI, ASGI through Django) started with all of
  the above configured and ``TRUSTED_PROXIES=127.0.0.1/32``, so a test may choose its client IP
  with ``X-Forwarded-For``.
"""

from __future__ import annotations

import datetime as dt
import http.server
import socket
import socketserver
import ssl
import struct
import threading
import time
from pathlib import Path

import pytest

from conftest import free_port, start_server

NTP_EPOCH_OFFSET = 2208988800


class NtpPeer:
    """SNTP server on 127.0.0.1:``port``; ``offset`` seconds are added to its clock, and with
    ``silent`` it answers nothing."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.offset = 0.0
        self.silent = False
        self.asked = 0
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                data, peer = self.sock.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            self.asked += 1
            if self.silent or len(data) < 48:
                continue
            now = time.time() + self.offset + NTP_EPOCH_OFFSET
            secs, frac = int(now), int((now % 1) * 2**32)
            reply = bytearray(48)
            reply[0] = (0 << 6) | (4 << 3) | 4  # LI 0, VN 4, mode 4 (server)
            reply[1] = 1  # stratum
            reply[24:32] = data[40:48]  # originate = the client's transmit
            reply[32:40] = struct.pack("!II", secs, frac)
            reply[40:48] = struct.pack("!II", secs, frac)
            self.sock.sendto(bytes(reply), peer)

    def close(self):
        self._stop = True
        self.sock.close()


@pytest.fixture(scope="session")
def ntp_peer():
    peer = NtpPeer()
    yield peer
    peer.close()


def make_certificate(common_name: str, *, expired: bool = False) -> tuple[bytes, bytes]:
    """``(cert PEM, key PEM)`` of a self-signed certificate for ``common_name``, valid now (or
    expired a day ago), issued by organisation "Peer Test Org"."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Peer Test Org"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    start, end = (now - dt.timedelta(days=30), now - dt.timedelta(days=1)) if expired else (
        now - dt.timedelta(days=1), now + dt.timedelta(days=90))
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(common_name)]), critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


class TlsPeer:
    """Accepts TLS connections on ``host:port`` with the given certificate and closes them."""

    def __init__(self, host: str, port: int, cert_dir: Path, common_name: str, expired: bool):
        cert, key = make_certificate(common_name, expired=expired)
        cert_file, key_file = cert_dir / f"{host}.crt", cert_dir / f"{host}.key"
        cert_file.write_bytes(cert)
        key_file.write_bytes(key)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert_file, key_file)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, port))
        self.listener.listen(16)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                conn.settimeout(5)
                with self.context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError):
                pass
            finally:
                conn.close()

    def close(self):
        self.listener.close()


@pytest.fixture(scope="session")
def tls_peers(tmp_path_factory):
    """``port``: 127.0.0.1 serves a valid certificate for ``localhost``; 127.0.0.3 an expired one."""
    cert_dir = tmp_path_factory.mktemp("certs")
    for _ in range(20):
        port = free_port()
        try:
            good = TlsPeer("127.0.0.1", port, cert_dir, "localhost", expired=False)
        except OSError:
            continue
        try:
            bad = TlsPeer("127.0.0.3", port, cert_dir, "expired.localhost", expired=True)
        except OSError:
            good.close()
            continue
        yield port
        good.close()
        bad.close()
        return
    raise RuntimeError("no port free on both 127.0.0.1 and 127.0.0.3")


@pytest.fixture(scope="session")
def clamd_peer():
    """A TCP responder for clamd's ``zVERSION`` and ``zPING`` commands."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            command = self.request.recv(64)
            if command.startswith(b"zVERSION"):
                self.request.sendall(b"ClamAV 1.4.2/27500/Mon Jan  5 09:00:00 2026\0")
            elif command.startswith(b"zPING"):
                self.request.sendall(b"PONG\0")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


class Origin:
    """An HTTP/1.1 server on 127.0.0.1; ``routes[path] = (status, headers, body)`` or a callable
    ``handler(request) -> None`` that writes its own answer."""

    def __init__(self):
        routes = self.routes = {}
        self.hits: list[str] = []
        hits = self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                hits.append(self.path)
                route = routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if callable(route):
                    route(self)
                    return
                status, headers, body = route
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def origin_server():
    server = Origin()
    yield server
    server.close()


@pytest.fixture
def origin(origin_server):
    """The shared origin server, with this test's routes only."""
    origin_server.routes.clear()
    origin_server.hits.clear()
    yield origin_server
    origin_server.routes.clear()


@pytest.fixture(scope="session")
def geoip_db(tmp_path_factory) -> Path:
    from mmdb_writer import MMDBWriter
    from netaddr import IPSet

    writer = MMDBWriter(ip_version=6, ipv4_compatible=True, database_type="Test-Country")
    for net, code in (("198.51.100.0/24", "DE"), ("203.0.113.0/24", "US"), ("2001:db8::/32", "FR")):
        writer.insert_network(IPSet([net]), {"country": {"iso_code": code}})
    path = tmp_path_factory.mktemp("geoip") / "test-country.mmdb"
    writer.to_db_file(str(path))
    return path


@pytest.fixture(scope="session")
def svc_env(live_env, ntp_peer, tls_peers, clamd_peer, geoip_db) -> dict[str, str]:
    return {
        **live_env,
        "GEOIP_DATABASE": str(geoip_db),
        "TRUSTED_PROXIES": "127.0.0.1/32",
        "AVATARS_FETCH_ALLOW_NETWORKS": "127.0.0.1/32",
        "AVATARS_FETCH_TIMEOUT": "3",
        "AVATARS_FETCH_MAX_BYTES": str(2 * 1024 * 1024),
        "HEALTH_NTP_SERVER": f"127.0.0.1:{ntp_peer.port}",
        "HEALTH_NTP_TIMEOUT": "1",
        "HEALTH_CERTIFICATE_PORT": str(tls_peers),
        "HEALTH_CERTIFICATE_TIMEOUT": "3",
        "ANTIVIRUS_CLAMD": f"127.0.0.1:{clamd_peer}",
    }


def _svc(kind: str, env: dict[str, str], **extra):
    server = start_server("wsgi" if kind == "wsgi" else "asgi", {**env, **extra})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def svc_asgi(svc_env):
    yield from _svc("asgi", svc_env)


@pytest.fixture(scope="session")
def svc_wsgi(svc_env):
    yield from _svc("wsgi", svc_env)


@pytest.fixture(scope="session")
def svc_lean_asgi(svc_env):
    yield from _svc("lean_asgi", svc_env, V1_PROTOCOL="asgi", V1_ADAPTER="lean")


@pytest.fixture(scope="session")
def svc_naive(svc_env):
    yield from _svc("naive", svc_env, V1_ADAPTER="django")


@pytest.fixture(params=["asgi", "lean_asgi", "wsgi"])
def svc_server(request):
    """The builds of conftest's ``BUILDS`` with the local peers configured (see the module docstring)."""
    return request.getfixturevalue(f"svc_{request.param}")


@pytest.fixture
def svc_api(svc_asgi, project):
    from conftest import Api

    return Api(svc_asgi, project)
