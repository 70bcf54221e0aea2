"""Deployment code on disk: the uploaded ``tar.gz`` source and the build output.

Layout under ``FUNCTIONS_ROOT``: ``<deployment row id>/source.tar.gz`` (as uploaded),
``<deployment row id>/build.tar`` (the built code, a plain tar), and
``.uploads/<deployment row id>/<index>.part`` for the chunks of an unfinished upload. Every API
process and the worker must see the same directory (a shared volume in compose).
"""

from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import zlib

from django.conf import settings

from apps.core.errors import AppwriteError


def deployment_dir(deployment_id: int) -> str:
    return os.path.join(settings.FUNCTIONS_ROOT, str(deployment_id))


def source_path(deployment_id: int) -> str:
    return os.path.join(deployment_dir(deployment_id), "source.tar.gz")


def build_path(deployment_id: int) -> str:
    return os.path.join(deployment_dir(deployment_id), "build.tar")


def upload_dir(deployment_id: int) -> str:
    return os.path.join(settings.FUNCTIONS_ROOT, ".uploads", str(deployment_id))


def check_archive(path: str) -> int:
    """Check that ``path`` is a gzip-compressed tar whose members stay inside it (no absolute
    paths, no ``..``, no device files; links only to inside); returns the unpacked size in
    bytes. Raises 400 ``storage_invalid_file`` naming what is wrong (blocking)."""
    total = 0
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            members = 0
            for member in tar:
                members += 1
                name = member.name
                if name.startswith("/") or ".." in name.split("/"):
                    raise _bad(f"member {name!r} points outside the archive")
                if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                    raise _bad(f"member {name!r} is not a file, directory or link")
                if (member.issym() or member.islnk()) and (
                        member.linkname.startswith("/") or ".." in member.linkname.split("/")):
                    raise _bad(f"link {name!r} points outside the archive")
                total += member.size
            if not members:
                raise _bad("the archive is empty")
    except (tarfile.TarError, OSError, EOFError, zlib.error, gzip.BadGzipFile):
        raise _bad("the code must be a gzip-compressed tar archive (.tar.gz)") from None
    return total


def _bad(reason: str) -> AppwriteError:
    return AppwriteError("storage_invalid_file", f"The deployment's code archive is invalid: {reason}.")


def plain_tar(path: str) -> bytes:
    """The source archive decompressed (the engine API takes a plain tar; blocking)."""
    with gzip.open(path, "rb") as f:
        return f.read()


def remove(deployment_id: int) -> None:
    shutil.rmtree(deployment_dir(deployment_id), ignore_errors=True)
    shutil.rmtree(upload_dir(deployment_id), ignore_errors=True)
