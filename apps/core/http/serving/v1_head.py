"""Reading a request head for :mod:`apps.core.http.serving.v1_protocol`: strictly, or not at all.

:func:`parse_head` accepts only what the /v1 protocol can serve exactly and returns ``None``
for everything else, which the protocol then hands, bytes and all, to uvicorn's protocol (whose
httptools parser answers a malformed request with 400 and an oversized one with 414 or 431).
Accepted: a request line ``METHOD /v1... HTTP/1.1`` with one of the seven usual methods and an
origin-form target of visible ASCII without a fragment (RFC 9112 §3); header lines ``name: value`` with a token
name and a value of visible characters, spaces and tabs (RFC 9110 §5.1, §5.5; no obsolete line
folding, no control characters); within the head limits; no ``Transfer-Encoding``, ``Expect``
or ``Upgrade``; exactly one ``Host``; at most one ``Content-Length`` of ASCII digits up to :data:`MAX_BODY`; a
``Connection`` field of ``close`` or ``keep-alive`` only. So no request that two parsers could
frame differently (request smuggling, RFC 9112 §11.2) is ever read here.
"""

from __future__ import annotations

import re

from apps.core.http.serving.limits import HeadLimits

# Bodies up to this many bytes are read by the /v1 protocol; longer ones (file uploads) go to
# uvicorn's protocol, which streams them to the app with flow control (its high-water mark).
MAX_BODY = 64 * 1024

# The target: visible ASCII but "#" (a fragment, which uvicorn's parser drops, is left to it).
_REQUEST_LINE = re.compile(rb"(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (/v1(?:[/?][\x21\x22\x24-\x7e]*)?) HTTP/1\.1\r\n")
_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
# Each line can match in one way only (a token has no ":", a value no CR or LF), so a head that
# does not match is refused in time linear in its length: a pattern with optional whitespace
# before a value that may also start with whitespace backtracked exponentially in the number of
# fields (24 fields and one bad line held the event loop for 7 s).
_FIELDS = re.compile(rb"(?:" + _TOKEN + rb":[\t\x20-\x7e\x80-\xff]*\r\n)*")
# Leading whitespace is not part of a value; trailing whitespace is kept, as uvicorn's parser
# (httptools) keeps it, so a request reads the same whichever protocol serves it.
_FIELD_PARTS = re.compile(rb"(" + _TOKEN + rb"):[ \t]*([^\r\n]*)\r\n")
_DIGITS = re.compile(r"[0-9]{1,18}")
# Fields that make a request one for uvicorn's protocol (framing, interim answers, upgrades).
_HANDED_OVER = frozenset({"transfer-encoding", "expect", "upgrade"})


class Request:
    """A parsed head: ``method``, ``target`` (bytes: path and query), ``headers`` (lower-case
    names; repeated fields joined with ``, ``, cookies with ``; ``), the body's ``length`` in
    bytes and whether the client asked to ``close`` after the answer."""

    __slots__ = ("close", "headers", "length", "method", "target")

    def __init__(self, method: str, target: bytes, headers: dict[str, str], length: int, close: bool):
        self.method, self.target, self.headers, self.length, self.close = method, target, headers, length, close


def parse_head(buf: bytes | bytearray, end: int, limits: HeadLimits, start: int = 0) -> Request | None:
    """The head ``buf[start:end + 4]`` (``end`` is where its blank line starts) as a
    :class:`Request`, or ``None`` when it is not one the /v1 protocol serves (see the module
    docstring)."""
    line = _REQUEST_LINE.match(buf, start, end + 2)
    if line is None or line.end() - 2 - start > limits.request_line:
        return None
    if _FIELDS.fullmatch(buf, line.end(), end + 2) is None:
        return None
    headers: dict[str, str] = {}
    size = count = 0
    for raw_name, raw_value in _FIELD_PARTS.findall(buf, line.end(), end + 2):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        count += 1
        size += len(raw_name) + len(raw_value)
        if name in headers:
            if name == "content-length" or name == "host":
                return None  # uvicorn's protocol refuses two Host fields (RFC 9112 §3.2)
            headers[name] = headers[name] + ("; " if name == "cookie" else ", ") + value
        else:
            headers[name] = value
    if count > limits.header_count or size > limits.header_bytes or not _HANDED_OVER.isdisjoint(headers):
        return None
    if "host" not in headers:
        return None  # an HTTP/1.1 request without Host: uvicorn's protocol answers 400 (RFC 9112 §3.2)
    length = 0
    declared = headers.get("content-length")
    if declared is not None:
        if _DIGITS.fullmatch(declared) is None:  # not str.isdigit(): "²" is a digit to it
            return None
        length = int(declared)
        if length > MAX_BODY:
            return None
    connection = headers.get("connection", "").lower()
    if connection and connection not in ("keep-alive", "close"):
        return None  # "upgrade" and token lists: uvicorn's protocol
    return Request(line.group(1).decode("ascii"), bytes(line.group(2)), headers, length, connection == "close")
