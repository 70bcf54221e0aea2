"""Streaming file bytes to the client, with single byte ranges and ETags.

Django has no Range support (ticket #22479) and consumes sync iterators under ASGI by reading
them whole (django-asgi-facts §6), so responses carry a :class:`FileStream`: an async iterator
under ASGI (each read runs on the blocking executor) and a sync iterator under WSGI. Neither ever
holds more than one read (``backends.READ_SIZE`` bytes) of the file.
"""

from __future__ import annotations

import re

from apps.core.http.context import Response
from apps.core.runtime import run_blocking
from apps.storage import backends

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_DONE = object()


class FileStream:
    """Bytes ``[start, start + length)`` of the object ``key``, read lazily in pieces."""

    def __init__(self, mode: str, key: str, start: int, length: int):
        self.mode, self.key, self.start, self.length = mode, key, start, length

    def __iter__(self):
        return backends.read_range(self.key, self.start, self.length)

    async def __aiter__(self):
        pieces = backends.read_range(self.key, self.start, self.length)
        try:
            while True:
                piece = await run_blocking(self.mode, next, pieces, _DONE)
                if piece is _DONE:
                    return
                yield piece
        finally:
            try:
                pieces.close()
            except ValueError:  # a cancelled read (client gone) still runs in the executor;
                pass  # the generator and its file are closed when it is collected


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """``(start, length)`` for a ``Range`` header on a ``size``-byte file (RFC 9110 §14.1.2);
    ``None`` when the header is absent, not a single byte range, or malformed (serve it whole).

    Supports ``bytes=a-b``, open-ended ``bytes=a-`` and suffix ``bytes=-n``. Raises
    ``ValueError`` when the range is well-formed but unsatisfiable (answer 416).
    """
    found = _RANGE.match(header.strip()) if header else None
    if not found or (not found.group(1) and not found.group(2)):
        return None
    first, last = found.group(1), found.group(2)
    if not first:  # suffix: the last n bytes
        n = int(last)
        if n == 0 or size == 0:
            raise ValueError("empty suffix range")
        n = min(n, size)
        return size - n, n
    start = int(first)
    if last and int(last) < start:
        return None  # syntactically invalid: RFC 9110 says ignore the header
    if start >= size:
        raise ValueError("range starts past the end")
    end = int(last) if last else size - 1
    end = min(end, size - 1)
    return start, end - start + 1


def etag_matches(header: str, etag: str) -> bool:
    """True when ``If-None-Match`` names ``etag`` (weak comparison) or is ``*``."""
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    plain = etag.removeprefix("W/")
    return "*" in tags or any(t.removeprefix("W/") == plain for t in tags)


def file_response(ctx, file: dict, *, content_type: str, disposition: str) -> Response:
    """The response for download/view: 200 whole file, 206 one range, 304 when the client's
    ETag matches, 416 (``storage_invalid_range``) for an unsatisfiable range."""
    size = int(file["size_actual"])
    etag = f'"{file["signature"]}"'
    headers = [
        ("ETag", etag),
        ("Accept-Ranges", "bytes"),
        ("Cache-Control", "private, max-age=0, must-revalidate"),
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Disposition", disposition),
    ]
    if etag_matches(ctx.headers.get("if-none-match", ""), etag):
        return Response(status=304, content_type=None, headers=headers)
    try:
        wanted = parse_range(ctx.headers.get("range", ""), size)
    except ValueError:
        from apps.core.errors import AppwriteError

        raise AppwriteError("storage_invalid_range", headers={"Content-Range": f"bytes */{size}"}) from None
    status, start, length = 200, 0, size
    if wanted is not None:
        status, (start, length) = 206, wanted
        headers.append(("Content-Range", f"bytes {start}-{start + length - 1}/{size}"))
    headers.append(("Content-Length", str(length)))
    if ctx.method == "HEAD":
        return Response(status=status, content_type=content_type, headers=headers)
    return Response(status=status, content_type=content_type, headers=headers,
                    stream=FileStream(ctx.mode, file["key"], start, length))
