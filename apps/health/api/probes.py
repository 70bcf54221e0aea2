"""Health routes that probe something outside the request: time, certificate, antivirus, file
storage. The blocking work runs through ``run_blocking``; every probe has a deadline."""

from __future__ import annotations

import re
import time
from typing import Annotated
from urllib.parse import urlsplit

from django.conf import settings
from django.core.files.storage import storages
from pydantic import AfterValidator, StringConstraints

from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response
from apps.core.http.inputs import Strict
from apps.health import probes

MAX_CLOCK_GAP = 60  # seconds (Appwrite: "Server time gaps detected" beyond a minute)
_HOSTNAME = re.compile(r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def _domain(value: str) -> str:
    """A host name, or the host of an http(s) URL (Appwrite: URL or Domain)."""
    if "://" in value:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("Value must be a valid domain or URL")
        value = parts.hostname
    if not _HOSTNAME.match(value):
        raise ValueError("Value must be a valid domain or URL")
    return value.lower()


class CertificateParams(Strict):
    domain: Annotated[str, StringConstraints(min_length=1, max_length=2048), AfterValidator(_domain)]


async def health_time(ctx):
    """``{remoteTime, localTime, diff}`` (unix seconds) against ``HEALTH_NTP_SERVER``; 500
    ``general_server_error`` when the server cannot be asked or the gap is over a minute."""
    try:
        remote = await run_blocking(ctx.mode, probes.sntp_time, settings.HEALTH_NTP_SERVER,
                                    settings.HEALTH_NTP_TIMEOUT)
    except probes.ProbeFailed as exc:
        raise AppwriteError("general_server_error", f"Failed to get the time: {exc}") from None
    local = int(time.time())
    remote = int(remote)
    diff = remote - local
    if abs(diff) > MAX_CLOCK_GAP:
        raise AppwriteError("general_server_error", "Server time gaps detected")
    return json_response({"remoteTime": remote, "localTime": local, "diff": diff})


async def health_certificate(ctx):
    """Appwrite's ``HealthCertificate`` of ``domain``'s TLS certificate. 404
    ``health_invalid_host`` when no TLS connection can be made, 404 ``health_certificate_expired``
    when it has expired."""
    domain = ctx.params.domain
    try:
        cert = await run_blocking(ctx.mode, probes.peer_certificate, domain, settings.HEALTH_CERTIFICATE_PORT,
                                  settings.HEALTH_CERTIFICATE_TIMEOUT)
    except probes.ProbeFailed as exc:
        raise AppwriteError("health_invalid_host", str(exc)) from None
    if cert.valid_to < time.time():
        raise AppwriteError("health_certificate_expired")
    return json_response({
        "name": cert.name, "subjectSN": cert.subject_cn, "issuerOrganisation": cert.issuer_org,
        "validFrom": str(cert.valid_from), "validTo": str(cert.valid_to), "signatureTypeSN": cert.signature_type,
    })


async def health_antivirus(ctx):
    """``{version, status}``: ``disabled`` without ``ANTIVIRUS_CLAMD``; else the daemon's version
    and ``pass``/``fail``; 500 ``general_server_error`` when it cannot be reached."""
    if not settings.ANTIVIRUS_CLAMD:
        return json_response({"version": "", "status": "disabled"})
    try:
        version, alive = await run_blocking(ctx.mode, probes.clamd_version, settings.ANTIVIRUS_CLAMD,
                                            settings.ANTIVIRUS_TIMEOUT)
    except probes.ProbeFailed:
        raise AppwriteError("general_server_error", "Antivirus is not available") from None
    return json_response({"version": version, "status": "pass" if alive else "fail"})


async def health_storage(ctx):
    """A write/read/delete of a small object on the file storage (local or S3)."""
    started = time.perf_counter()
    try:
        await run_blocking(ctx.mode, probes.storage_probe, storages["files"])
    except probes.ProbeFailed as exc:
        raise AppwriteError("general_server_error", str(exc)) from None
    return json_response({"name": "storage", "ping": round((time.perf_counter() - started) * 1000), "status": "pass"})


async def health_storage_local(ctx):
    """The local directories the server writes (uploads in progress, and the file root when
    files are stored locally) exist and are readable and writable."""
    started = time.perf_counter()
    paths = {"Uploads": settings.STORAGE_UPLOAD_DIR}
    if settings.STORAGE_BACKEND == "local":
        paths["Files"] = settings.STORAGE_ROOT
    try:
        await run_blocking(ctx.mode, probes.directories_probe, paths)
    except probes.ProbeFailed as exc:
        raise AppwriteError("general_server_error", str(exc)) from None
    return json_response({"name": "storage.local", "ping": round((time.perf_counter() - started) * 1000),
                          "status": "pass"})
