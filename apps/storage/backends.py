"""Where file bytes live: the Django storage named ``files`` in ``settings.STORAGES``.

``settings.STORAGE_BACKEND`` picks a local directory (``FileSystemStorage`` under
``STORAGE_ROOT``) or an S3-compatible service (django-storages ``S3Storage``). Every function here
is blocking: call it through :func:`apps.core.drivers.runtime.run_blocking`.

Reads never load a whole object: local files are read with ``seek`` + bounded ``read``; S3
objects with a ranged ``GetObject`` whose body is read in pieces (django-storages' ``S3File``
would download the whole object into an in-memory spool first, so it is not used for reads).
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Iterator

from django.core.files import File as DjangoFile
from django.core.files.storage import storages

log = logging.getLogger("apps.storage")

READ_SIZE = 256 * 1024  # bytes per read while streaming a download


def files_storage():
    """The configured storage backend instance (``STORAGES["files"]``)."""
    return storages["files"]


def is_s3(storage) -> bool:
    return type(storage).__name__ == "S3Storage"


def new_key(project_uid: str, bucket_uid: str) -> str:
    """A fresh, server-generated object key: ``<project>/<bucket>/<2 hex>/<32 hex>``.

    Client file names never appear in keys.
    """
    token = secrets.token_hex(16)
    return f"{project_uid}/{bucket_uid}/{token[:2]}/{token}"


class _LocalTempFile(DjangoFile):
    """A finished upload on local disk; ``temporary_file_path`` lets ``FileSystemStorage``
    move it into place instead of copying it."""

    def temporary_file_path(self) -> str:
        file = self.file
        assert file is not None  # opened when the upload finished
        return str(file.name)


def store(key: str, path: str) -> str:
    """Put the local file at ``path`` under ``key`` (moved on local storage, uploaded on S3
    with boto3's streaming multipart transfer); returns the key actually used. The source is
    gone afterwards."""
    storage = files_storage()
    with open(path, "rb") as fh:
        if is_s3(storage):
            saved = storage.save(key, DjangoFile(fh, name=key))
        else:
            saved = storage.save(key, _LocalTempFile(fh, name=key))
    if os.path.exists(path):
        os.unlink(path)
    return saved


def store_file(key: str, fh) -> str:
    """Write the readable binary file object ``fh`` (positioned at 0) under ``key``; returns
    the key actually used. Local storage writes it in place (``O_EXCL``), S3 streams it."""
    return files_storage().save(key, DjangoFile(fh, name=key))


def delete_quietly(key: str) -> None:
    """:func:`delete`, logging instead of raising (cleanup after a failed write)."""
    try:
        delete(key)
    except Exception:
        log.exception("could not delete %s after a failed write", key)


def delete(key: str) -> None:
    """Remove the object under ``key`` (missing objects are ignored)."""
    files_storage().delete(key)


def read_range(key: str, start: int, length: int, size: int = READ_SIZE) -> Iterator[bytes]:
    """Yield the bytes ``[start, start + length)`` of ``key`` in pieces of at most ``size`` bytes."""
    storage = files_storage()
    if length <= 0:
        return
    if is_s3(storage):
        client = storage.connection.meta.client
        obj = client.get_object(
            Bucket=storage.bucket_name,
            Key=storage._normalize_name(key),
            Range=f"bytes={start}-{start + length - 1}",
        )
        body = obj["Body"]
        try:
            while True:
                piece = body.read(size)
                if not piece:
                    return
                yield piece
        finally:
            body.close()
    else:
        with open(storage.path(key), "rb") as fh:
            fh.seek(start)
            left = length
            while left > 0:
                piece = fh.read(min(size, left))
                if not piece:
                    return
                left -= len(piece)
                yield piece


def read_bytes(key: str, start: int, length: int) -> bytes:
    """The bytes ``[start, start + length)`` of ``key`` at once (for small bodies). Raises
    ``FileNotFoundError`` when the object is missing (local file or S3 ``NoSuchKey``)."""
    try:
        return b"".join(read_range(key, start, length))
    except FileNotFoundError:
        raise
    except Exception as exc:
        if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            raise FileNotFoundError(key) from exc
        raise


def read_checked(key: str, start: int, length: int, size: int) -> bytes:
    """:func:`read_bytes`, refusing an object shorter than its recorded ``size`` bytes (local:
    :func:`local_size`; S3: a short read). Raises ``FileNotFoundError`` when the object is
    missing or short."""
    stored = local_size(key)
    if stored is not None and stored < size:
        raise FileNotFoundError(key)
    body = read_bytes(key, start, length)
    if len(body) != length:
        raise FileNotFoundError(key)
    return body


def local_size(key: str) -> int | None:
    """The size in bytes of ``key`` on local storage (-1 when the file is missing); ``None`` on
    S3 (not checked: a HEAD request per download would cost a network round trip)."""
    path = local_path(key)
    if path is None:
        return None
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return -1


def local_path(key: str) -> str | None:
    """The filesystem path of ``key`` on local storage; ``None`` on S3."""
    storage = files_storage()
    return None if is_s3(storage) else storage.path(key)


def read_head(key: str, limit: int) -> bytes:
    """The first ``limit`` bytes of ``key`` (for previews and MIME sniffing)."""
    return b"".join(read_range(key, 0, limit))
