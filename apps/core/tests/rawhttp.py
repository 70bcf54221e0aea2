"""Raw HTTP/1.1 over a socket, for requests no HTTP client library will send (oversized or
malformed heads, stalled clients)."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass


@dataclass
class RawAnswer:
    """A parsed answer: ``status`` (0 = the connection closed with no answer), lower-case
    ``headers``, ``body`` bytes, ``reset`` (the connection was reset) and ``seconds`` from
    the first byte sent to the connection's end."""

    status: int
    headers: dict[str, str]
    body: bytes
    reset: bool
    seconds: float

    def json(self) -> dict:
        return json.loads(self.body)


def _parse(raw: bytes, reset: bool, seconds: float) -> RawAnswer:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not raw or not lines[0].startswith("HTTP/"):
        return RawAnswer(0, {}, raw, reset, seconds)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _dechunk(body)
    return RawAnswer(int(lines[0].split()[1]), headers, body, reset, seconds)


def _dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2:]
    return out


def exchange(port: int, chunks, *, pause: float = 0.0, timeout: float = 20.0) -> RawAnswer:
    """Send ``chunks`` (bytes pieces, ``pause`` seconds apart) on a new connection from a thread
    while reading the answer until the server closes the connection (or ``timeout``). Sending
    stops quietly when the server stops taking bytes."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    start = time.monotonic()

    def send():
        try:
            for piece in chunks:
                sock.sendall(piece)
                if pause:
                    time.sleep(pause)
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    data, reset = b"", False
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
    except ConnectionResetError:
        reset = True
    except TimeoutError:
        pass
    seconds = time.monotonic() - start
    sock.close()
    sender.join(timeout)
    return _parse(data, reset, seconds)


def get_with_headers(port: int, headers: list[tuple[str, str]], path: str = "/v1/ping") -> bytes:
    """The bytes of a GET of ``path`` with ``headers`` (and ``Connection: close``)."""
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
