"""Template deployments: a directory of a repository's archive becomes a deployment's source.

The worker (``apps.functions.tasks.build_deployment``) calls :func:`fetch` before the build of a
deployment that has a ``template``: the archive is downloaded from ``FUNCTIONS_TEMPLATE_SOURCE``
in GitHub's URL shape (:func:`archive_url`), at most ``FUNCTIONS_SIZE_LIMIT`` bytes within
``FUNCTIONS_TEMPLATE_TIMEOUT`` seconds; its single top-level directory (GitHub's
``<repository>-<reference>/``) is dropped and only ``rootDirectory`` is kept, as the root of the
deployment's ``source.tar.gz``. Any failure raises :class:`TemplateError`, whose message becomes
the failed deployment's build log (Appwrite fails the build when its clone fails).
"""

from __future__ import annotations

import os
import tarfile
import time
import urllib.error
import urllib.request
import zlib
from urllib.parse import quote, urlsplit

from django.conf import settings

from apps.core.errors import AppwriteError
from apps.functions import code

_REFS = {"branch": "refs/heads/", "tag": "refs/tags/", "commit": ""}
CHUNK = 64 * 1024
UNPACKED_FACTOR = 10  # an archive may unpack to at most this many times FUNCTIONS_SIZE_LIMIT


class TemplateError(Exception):
    """Why a template could not become a deployment's source (the build log's text)."""


def archive_url(template: dict) -> str:
    base = settings.FUNCTIONS_TEMPLATE_SOURCE.rstrip("/")
    return (f"{base}/{quote(template['owner'])}/{quote(template['repository'])}/archive/"
            f"{_REFS[template['type']]}{quote(template['reference'], safe='/')}.tar.gz")


def root_directory(value: str) -> str:
    """``rootDirectory`` as Appwrite reads it: no trailing ``/``, no leading ``.`` or ``/``."""
    return value.rstrip("/").lstrip(".").lstrip("/")


class _HttpOnly(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urlsplit(newurl).scheme not in ("http", "https"):
            raise TemplateError(f"Unable to download the template: redirected to {newurl!r}.")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download(url: str, target: str) -> int:
    """Save ``url`` to ``target`` within the size and time limits; its size (blocking)."""
    limit, timeout = settings.FUNCTIONS_SIZE_LIMIT, settings.FUNCTIONS_TEMPLATE_TIMEOUT
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(_HttpOnly)
    size = 0
    try:
        with opener.open(urllib.request.Request(url, headers={"User-Agent": "appwrite-functions"}),
                         timeout=timeout) as response, open(target, "wb") as out:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > limit:
                raise TemplateError(f"The template's archive ({int(declared):,} bytes) is larger than "
                                    f"FUNCTIONS_SIZE_LIMIT ({limit:,} bytes).")
            while chunk := response.read(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise TemplateError(f"The template's archive is larger than FUNCTIONS_SIZE_LIMIT ({limit:,} "
                                        "bytes).")
                if time.monotonic() > deadline:
                    raise TemplateError(f"Unable to download the template: {url} took longer than "
                                        f"{timeout} seconds.")
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise TemplateError(f"Unable to download the template: {url} answered HTTP {exc.code}"
                            f"{' (no such repository or reference)' if exc.code == 404 else ''}.") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TemplateError(f"Unable to download the template from {url}: {reason}.") from None
    return size


def extract(archive: str, root: str, target: str) -> None:
    """Write ``root`` of the downloaded ``archive`` (below its top-level directory) as the
    ``tar.gz`` ``target``: files, directories and links inside it (blocking)."""
    budget = settings.FUNCTIONS_SIZE_LIMIT * UNPACKED_FACTOR
    found = 0
    try:
        with tarfile.open(archive, mode="r:gz") as src, tarfile.open(target, mode="w:gz") as out:
            for member in src:
                budget -= member.size
                if budget < 0:
                    raise TemplateError("The template's archive unpacks to more than "
                                        f"{UNPACKED_FACTOR} times FUNCTIONS_SIZE_LIMIT.")
                rel = member.name.split("/", 1)[1] if "/" in member.name else ""
                rel = rel.strip("/")
                if root:
                    if rel != root and not rel.startswith(root + "/"):
                        continue
                    rel = rel[len(root):].strip("/")
                if not rel or not (member.isfile() or member.isdir() or member.issym()):
                    continue  # the directory itself; hard links, devices
                copy = tarfile.TarInfo(rel)
                copy.size, copy.mode, copy.mtime, copy.type = member.size, member.mode, member.mtime, member.type
                copy.linkname = member.linkname
                out.addfile(copy, src.extractfile(member) if member.isfile() else None)
                found += 1
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise TemplateError(f"The template's archive is not a valid .tar.gz: {exc}.") from None
    if not found:
        raise TemplateError(f"The template has no directory {root!r}." if root else "The template's archive is "
                            "empty.")


def fetch(deployment_id: int, template: dict) -> int:
    """Make the deployment's ``source.tar.gz`` from its template; the source's size in bytes
    (blocking). Raises :class:`TemplateError`."""
    folder = code.deployment_dir(deployment_id)
    os.makedirs(folder, exist_ok=True)
    downloaded, source = os.path.join(folder, "template.download"), code.source_path(deployment_id)
    url = archive_url(template)
    try:
        download(url, downloaded)
        extract(downloaded, root_directory(template.get("rootDirectory", "")), source + ".tmp")
        size = os.path.getsize(source + ".tmp")
        if size > settings.FUNCTIONS_SIZE_LIMIT:
            raise TemplateError(f"The template's directory ({size:,} bytes packed) is larger than "
                                f"FUNCTIONS_SIZE_LIMIT ({settings.FUNCTIONS_SIZE_LIMIT:,} bytes).")
        try:
            code.check_archive(source + ".tmp")
        except AppwriteError as exc:
            raise TemplateError(exc.message) from None
        os.replace(source + ".tmp", source)
        return size
    finally:
        for leftover in (downloaded, source + ".tmp"):
            if os.path.exists(leftover):
                os.remove(leftover)
