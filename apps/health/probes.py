"""Blocking probes behind the Health routes (call through ``run_blocking``): SNTP time, a TLS
certificate, a ClamAV daemon, the file storage. Each has a deadline; none can hang a request.
"""

from __future__ import annotations

import os
import socket
import ssl
import struct
import time
import uuid
from dataclasses import dataclass

NTP_EPOCH_OFFSET = 2208988800  # seconds from 1900-01-01 (NTP era 0) to 1970-01-01 (RFC 5905)


class ProbeFailed(Exception):
    """A probe could not get an answer; the message says why (safe to show an operator)."""


def split_host_port(value: str, default_port: int) -> tuple[str, int]:
    """``"host"``, ``"host:port"`` or ``"[v6]:port"`` -> ``(host, port)``."""
    value = value.strip()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, int(port)
    return value, default_port


def sntp_time(server: str, timeout: float) -> float:
    """The server's transmit time as unix seconds, from one SNTP client request (RFC 4330:
    version 4, mode 3). Raises :class:`ProbeFailed` on resolution, socket or timeout errors
    and on an answer that is not a server reply."""
    host, port = split_host_port(server, 123)
    deadline = time.monotonic() + timeout
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    except (OSError, UnicodeError) as exc:
        raise ProbeFailed(f"cannot resolve time server {host}: {exc}") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        try:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            sock.connect(address)
            sock.send(b"\x23" + bytes(47))  # LI 0, VN 4, mode 3 (client)
            while True:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                reply = sock.recv(512)
                if len(reply) >= 48 and reply[0] & 0x07 == 4:  # mode 4 (server)
                    break
                if time.monotonic() >= deadline:
                    raise TimeoutError
        except TimeoutError:
            raise ProbeFailed(f"no answer from time server {host}:{port} within {timeout:g} s") from None
        except OSError as exc:
            raise ProbeFailed(f"time server {host}:{port}: {exc}") from None
    seconds, fraction = struct.unpack("!II", reply[40:48])
    if seconds == 0:
        raise ProbeFailed("the time server sent no transmit time (not synchronised)")
    return seconds - NTP_EPOCH_OFFSET + fraction / 2**32


@dataclass(frozen=True, slots=True)
class Certificate:
    """The fields of Appwrite's ``HealthCertificate`` model; times are unix seconds."""

    name: str
    subject_cn: str
    issuer_org: str
    valid_from: int
    valid_to: int
    signature_type: str


def peer_certificate(host: str, port: int, timeout: float) -> Certificate:
    """The certificate ``host:port`` presents over TLS (SNI = ``host``). It is read, not
    verified: the route reports on certificates, including self-signed and expired ones.
    Raises :class:`ProbeFailed` when no TLS connection can be made within ``timeout`` seconds."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            raw.settimeout(timeout)
            with context.wrap_socket(raw, server_hostname=host) as tls:
                der = tls.getpeercert(binary_form=True)
    except (OSError, UnicodeError, ValueError) as exc:
        raise ProbeFailed(f"Failed to connect to host: {exc}") from None
    if not der:
        raise ProbeFailed(f"Peer certificate not available for {host}")
    cert = x509.load_der_x509_certificate(der)

    def first(name, oid) -> str:
        found = name.get_attributes_for_oid(oid)
        return str(found[0].value) if found else ""

    subject_cn = first(cert.subject, NameOID.COMMON_NAME)
    sig = cert.signature_algorithm_oid._name  # e.g. "sha256WithRSAEncryption"
    return Certificate(
        name="/" + "/".join(a.rfc4514_string() for a in reversed(list(cert.subject))) if len(cert.subject) else "",
        subject_cn=subject_cn,
        issuer_org=first(cert.issuer, NameOID.ORGANIZATION_NAME),
        valid_from=int(cert.not_valid_before_utc.timestamp()),
        valid_to=int(cert.not_valid_after_utc.timestamp()),
        signature_type=_OPENSSL_SHORT.get(sig, sig),
    )


# OpenSSL's short names, which Appwrite reports as signatureTypeSN.
_OPENSSL_SHORT = {
    "sha256WithRSAEncryption": "RSA-SHA256", "sha384WithRSAEncryption": "RSA-SHA384",
    "sha512WithRSAEncryption": "RSA-SHA512", "sha1WithRSAEncryption": "RSA-SHA1",
    "ecdsa-with-SHA256": "ecdsa-with-SHA256", "ecdsa-with-SHA384": "ecdsa-with-SHA384",
    "ed25519": "ED25519",
}


def clamd_version(address: str, timeout: float) -> tuple[str, bool]:
    """``(version, alive)`` of a ClamAV daemon at ``host:port``: its ``VERSION`` answer and
    whether ``PING`` answers ``PONG`` (clamd's TCP protocol, null-terminated commands).
    Raises :class:`ProbeFailed` when it cannot be reached."""
    host, port = split_host_port(address, 3310)

    def ask(command: bytes) -> str:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"z" + command + b"\0")
            chunks: list[bytes] = []
            while len(b"".join(chunks)) < 4096:
                chunk = sock.recv(1024)
                if not chunk:
                    break
                chunks.append(chunk)
                if chunk.endswith(b"\0"):
                    break
        return b"".join(chunks).rstrip(b"\0\n").decode("utf-8", "replace")

    try:
        version = ask(b"VERSION")
        alive = ask(b"PING") == "PONG"
    except OSError as exc:
        raise ProbeFailed(f"Antivirus is not available: {exc}") from None
    return version, alive


def storage_probe(storage) -> None:
    """Write, read back and delete a small object on a Django storage. Raises
    :class:`ProbeFailed` saying which step failed."""
    from django.core.files.base import ContentFile

    name = f".health/{uuid.uuid4().hex}"
    payload = b"test"
    saved = None
    try:
        try:
            saved = storage.save(name, ContentFile(payload))
        except Exception as exc:  # any backend error: a filesystem or an S3 client's
            raise ProbeFailed(f"Failed writing a test file: {exc.__class__.__name__}") from None
        try:
            with storage.open(saved, "rb") as fh:
                if fh.read() != payload:
                    raise ProbeFailed("Failed reading the test file: content mismatch")
        except ProbeFailed:
            raise
        except Exception as exc:
            raise ProbeFailed(f"Failed reading the test file: {exc.__class__.__name__}") from None
    finally:
        if saved is not None:
            try:
                storage.delete(saved)
            except Exception:  # the probe's answer stands; a stray 4-byte file is harmless
                pass


def directories_probe(paths: dict[str, str]) -> None:
    """Each named directory exists (created if missing), is readable and writable. Raises
    :class:`ProbeFailed` naming the first that is not."""
    for label, path in paths.items():
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            raise ProbeFailed(f"Device {label} dir cannot be created") from None
        if not os.access(path, os.R_OK):
            raise ProbeFailed(f"Device {label} dir is not readable")
        if not os.access(path, os.W_OK):
            raise ProbeFailed(f"Device {label} dir is not writable")
