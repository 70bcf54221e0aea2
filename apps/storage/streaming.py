"""Streaming file bytes to the client, with single byte ranges and ETags.

Django has no Range support (ticket #22479) and consumes sync iterators under ASGI by reading
them whole, so responses carry a :class:`FileStream`: an async iterator
under ASGI and a sync iterator under WSGI. Neither ever holds more than one read
(``backends.READ_SIZE`` bytes) of the file.

Under ASGI a local file is read on the event loop with ``preadv2(RWF_NOWAIT)`` (Linux 4.14+),
which copies what the page cache holds and fails with ``EAGAIN`` instead of waiting for the disk;
only then does the read go to the blocking executor. A hot file therefore streams with no
thread hop per piece (one hop per piece cost the ASGI build 20 % of the download scenario's CPU),
and a cold one never blocks the loop. S3 objects and systems without ``RWF_NOWAIT`` use the
executor for every piece. Before the head, one executor hop opens the local file and checks its
size (a missing or short file is a 404, not a truncated 200); the stream reads that descriptor,
so a hot download makes one thread hop in all (two hops, a stat and an open, were about 12 % of
the download scenario's loop samples). At most ``STORAGE_STREAMS_MAX`` bodies stream at once per
process; later ones wait for a slot (the response head is already sent) holding their
descriptor, which bounds the memory that many slow readers pin in send buffers.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
from contextlib import asynccontextmanager

from django.conf import settings

from apps.core.drivers.runtime import ASYNC, run_blocking
from apps.core.errors import AppwriteError
from apps.core.http.context import Response, ShortBody
from apps.storage import backends

log = logging.getLogger("apps.storage")
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
SMALL_BODY = 64 * 1024  # bytes: bodies up to this size are read whole and sent in one message
YIELD_EVERY = 8  # pieces read from the page cache between two explicit yields to the event loop
_DONE = object()


class FileStream:
    """Bytes ``[start, start + length)`` of the object ``key``, read lazily in pieces.

    ``fd`` (optional, ASGI on local storage): a descriptor of the file, already opened by
    :func:`file_response`; the stream owns it and closes it when done, or when it is collected
    without being read (the client left before the body)."""

    def __init__(self, mode: str, key: str, start: int, length: int, fd: int | None = None):
        self.mode, self.key, self.start, self.length = mode, key, start, length
        self.fd = fd

    def close(self) -> None:
        """Close the descriptor if no read took it over (idempotent)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    __del__ = close

    def __iter__(self):
        self.close()  # WSGI reads by key
        return backends.read_range(self.key, self.start, self.length)

    async def __aiter__(self):
        try:
            slots = _stream_slots()
            if slots is None:
                async for piece in self._pieces():
                    yield piece
                return
            async with slots:  # cancelled while queued (the client left): the finally closes fd
                async for piece in self._pieces():
                    yield piece
        finally:
            self.close()

    @asynccontextmanager
    async def local_file(self):
        """For a server that sends a descriptor itself (``sendfile``, see
        ``apps.core.http.serving.v1_writer``): ``(fd, start, length)`` of the open local file while the
        caller holds a stream slot (``STORAGE_STREAMS_MAX``), closed afterwards; ``None`` when
        the bytes are not in an open local file (S3, WSGI), and the stream is read as usual."""
        fd, self.fd = self.fd, None
        if fd is None:
            yield None
            return
        try:
            slots = _stream_slots()
            if slots is None:
                yield fd, self.start, self.length
            else:
                async with slots:  # cancelled while queued (the client left): the fd is closed
                    yield fd, self.start, self.length
        finally:
            os.close(fd)

    async def _pieces(self):
        fd, self.fd = self.fd, None
        if fd is not None:  # local storage with RWF_NOWAIT: file_response opened it
            try:
                async for piece in _local_pieces(self.mode, fd, self.start, self.length):
                    yield piece
            except ShortBody as exc:
                log.error("file %s: %s while streaming", self.key, exc)
                raise
            return
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


_NOWAIT = getattr(os, "RWF_NOWAIT", 0)
_slots: dict[int, asyncio.Semaphore] = {}


def _stream_slots() -> asyncio.Semaphore | None:
    """The process's bound on concurrent file streams (``STORAGE_STREAMS_MAX``), one per event
    loop; ``None`` when unbounded. Measured with 500 parallel 20 MB downloads: peak RSS 243 MiB
    unbounded, 192 MiB with 64 slots, 160 MiB with 32, 144 MiB with 16, at the same byte rate
    (one core is saturated by far fewer streams)."""
    limit = settings.STORAGE_STREAMS_MAX
    if not limit:
        return None
    loop = id(asyncio.get_running_loop())
    if loop not in _slots:
        _slots.clear()  # a new loop (tests): the old one's semaphore is useless
        _slots[loop] = asyncio.Semaphore(limit)
    return _slots[loop]


def _read_blocking(fd: int, buf: bytearray, offset: int) -> int:
    return os.preadv(fd, [buf], offset)


def _open_sized(path: str) -> tuple[int, int]:
    """A read-only descriptor of ``path`` and the file's size in bytes: one blocking call.
    Raises ``FileNotFoundError`` when the file is missing."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return fd, os.fstat(fd).st_size
    except BaseException:
        os.close(fd)
        raise


async def _local_pieces(mode: str, fd: int, start: int, length: int):
    """Bytes ``[start, start + length)`` of the open local file ``fd`` (closed at the end) in
    pieces of at most ``backends.READ_SIZE`` bytes: from the page cache on the loop, else on the
    executor.

    Each piece is a ``memoryview`` of a buffer read for it alone and never written again, so the
    server can send it without a copy (``apps.core.http.serving.lean_asgi.note_server`` says when); Django's
    streaming response turns it into ``bytes`` itself. Copying each piece to ``bytes`` here was one
    more 20 MB copy per 20 MB download (A/B: 8.8 -> 8.2 ms of CPU per download, median of 3)."""
    nowait = _NOWAIT
    unsuspended = 0  # pieces since the loop last ran: see YIELD_EVERY
    try:
        offset, end = start, start + length
        while offset < end:
            unsuspended += 1
            if unsuspended >= YIELD_EVERY:
                # A read from the page cache and a send into a socket with room both return
                # without suspending: yield now and then, so other requests run and a gone
                # client is noticed (the adapters stop streaming; Django's handler cancels).
                unsuspended = 0
                await asyncio.sleep(0)
            buf = bytearray(min(backends.READ_SIZE, end - offset))
            got = 0
            if nowait:
                try:
                    got = os.preadv(fd, [buf], offset, nowait)
                except BlockingIOError:
                    got = -1
                except OSError as exc:  # a filesystem without RWF_NOWAIT support
                    if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                        raise
                    nowait, got = 0, -1
            if got <= 0:  # not cached (or EOF: confirm with a plain read)
                unsuspended = 0
                got = await run_blocking(mode, _read_blocking, fd, buf, offset)
                if got == 0:  # the file is shorter than recorded: the head promised more
                    raise ShortBody(f"stored file ended at byte {offset}, {end - offset} byte(s) short")
            offset += got
            yield memoryview(buf)[:got]
    finally:
        os.close(fd)


def _position(digits: str) -> int:
    """A byte position from its digits; past 30 digits, a number larger than any file (``int``
    refuses strings over 4,300 digits, and the exact value no longer matters)."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 30 else 10**30


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
        n = _position(last)
        if n == 0 or size == 0:
            raise ValueError("empty suffix range")
        n = min(n, size)
        return size - n, n
    start = _position(first)
    if last and _position(last) < start:
        return None  # syntactically invalid: RFC 9110 says ignore the header
    if start >= size:
        raise ValueError("range starts past the end")
    end = _position(last) if last else size - 1
    end = min(end, size - 1)
    return start, end - start + 1


def etag_matches(header: str, etag: str) -> bool:
    """True when ``If-None-Match`` names ``etag`` (weak comparison) or is ``*``."""
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    plain = etag.removeprefix("W/")
    return "*" in tags or any(t.removeprefix("W/") == plain for t in tags)


def _damaged(file: dict) -> AppwriteError:
    """The 404 for a file whose stored bytes are missing or shorter than recorded (logged: the
    storage was changed behind the API)."""
    log.error("file %s: stored bytes missing or shorter than the recorded %s", file["key"], file["size_actual"])
    return AppwriteError("storage_file_not_found")


async def file_response(ctx, file: dict, *, content_type: str, disposition: str) -> Response:
    """The response for download/view: 200 whole file, 206 one range, 304 when the client's
    ETag matches, 416 (``storage_invalid_range``) for an unsatisfiable range.

    Bodies up to :data:`SMALL_BODY` bytes are read in one blocking call and sent as one message
    (one executor hop in all, no stream slot); larger ones stream as a :class:`FileStream`.
    Raises 404 ``storage_file_not_found`` when the stored bytes are missing or shorter than the
    recorded size (checked before the answer's head on local storage; on S3 for small bodies)."""
    size = int(file["size_actual"])
    etag = f'"{file["signature"]}"'
    headers = [
        ("ETag", etag),
        ("Accept-Ranges", "bytes"),
        ("Cache-Control", "private, max-age=0, must-revalidate"),
        ("Content-Disposition", disposition),
    ]
    if etag_matches(ctx.headers.get("if-none-match", ""), etag):
        return Response(status=304, content_type=None, headers=headers)
    try:
        wanted = parse_range(ctx.headers.get("range", ""), size)
    except ValueError:
        raise AppwriteError("storage_invalid_range", headers={"Content-Range": f"bytes */{size}"}) from None
    status, start, length = 200, 0, size
    if wanted is not None:
        status, (start, length) = 206, wanted
        headers.append(("Content-Range", f"bytes {start}-{start + length - 1}/{size}"))
    headers.append(("Content-Length", str(length)))
    # Bytes missing or shorter than recorded (removed or damaged behind the API) are a 404 before
    # the head: a truncated 200 would carry the whole file's ETag, which caches would keep.
    if ctx.method != "HEAD" and length <= SMALL_BODY:
        try:  # one executor hop: size check and read together
            body = await run_blocking(ctx.mode, backends.read_checked, file["key"], start, length, size)
        except FileNotFoundError:
            raise _damaged(file) from None
        return Response(status=status, body=body, content_type=content_type, headers=headers)
    path = backends.local_path(file["key"]) if _NOWAIT and ctx.mode == ASYNC and ctx.method != "HEAD" else None
    if path is not None:  # one executor hop: open and size check together; the stream reads the fd
        try:
            fd, stored = await run_blocking(ctx.mode, _open_sized, path)
        except FileNotFoundError:
            raise _damaged(file) from None
        except OSError as exc:  # out of descriptors: many downloads waiting for a stream slot
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            log.warning("download of %s refused: %s", file["key"], exc.strerror)
            raise AppwriteError("general_service_unavailable") from None
        stream = FileStream(ctx.mode, file["key"], start, length, fd)  # owns fd from here
        if stored < size:
            raise _damaged(file)
        return Response(status=status, content_type=content_type, headers=headers, stream=stream)
    on_disk = await run_blocking(ctx.mode, backends.local_size, file["key"])
    if on_disk is not None and on_disk < size:
        raise _damaged(file)
    if ctx.method == "HEAD":
        return Response(status=status, content_type=content_type, headers=headers)
    return Response(status=status, content_type=content_type, headers=headers,
                    stream=FileStream(ctx.mode, file["key"], start, length))
