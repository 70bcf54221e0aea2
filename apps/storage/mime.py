"""MIME type detection: a small magic-byte sniff, then the file name's extension (stdlib
``mimetypes``), then a text check. No third-party package: the formats that matter for view and
preview (images, PDF, archives, media) have fixed signatures.
"""

from __future__ import annotations

import mimetypes

# (offset, signature, MIME type); first match wins. Sources: the formats' specifications
# (PNG RFC 2083 §3.1, GIF89a, JFIF, RIFF/WebP, PDF 1.7 §7.5.2, ZIP APPNOTE 4.3.7, RFC 1952 §2.3.1).
_SIGNATURES: list[tuple[int, bytes, str]] = [
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (0, b"BM", "image/bmp"),
    (0, b"II*\x00", "image/tiff"),
    (0, b"MM\x00*", "image/tiff"),
    (0, b"%PDF-", "application/pdf"),
    (0, b"PK\x03\x04", "application/zip"),
    (0, b"\x1f\x8b", "application/gzip"),
    (0, b"\x28\xb5\x2f\xfd", "application/zstd"),
    (0, b"OggS", "audio/ogg"),
    (0, b"fLaC", "audio/flac"),
    (0, b"ID3", "audio/mpeg"),
    (0, b"\x1a\x45\xdf\xa3", "video/webm"),
]

# Types a browser would run script from when rendered inline from our origin; ``view`` serves
# them as text/plain so an uploaded HTML or SVG file cannot act as our site.
_SCRIPTABLE = frozenset({
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
    "text/javascript", "application/javascript", "text/xsl",
})

# Extensions whose ZIP container has its own type.
_ZIP_FAMILY = {".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".epub", ".jar", ".apk"}


def _sniff(head: bytes) -> str | None:
    for offset, sig, kind in _SIGNATURES:
        if head[offset:offset + len(sig)] == sig:
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"avif", b"avis"):
            return "image/avif"
        if brand in (b"heic", b"heix", b"mif1"):
            return "image/heic"
        return "video/mp4"
    return None


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a multi-byte character cut at the end of the sample
    return True


def detect(head: bytes, name: str) -> str:
    """The MIME type of a file from its first bytes (≥ 16 bytes; 512 is plenty) and its name.

    Signatures win over the extension, except for ZIP-based office formats, whose extension is
    more specific. Falls back to ``text/plain`` for UTF-8 text and ``application/octet-stream``.
    """
    guessed = mimetypes.guess_type(name, strict=False)[0] if name else None
    sniffed = _sniff(head)
    if sniffed == "application/zip" and guessed and any(name.lower().endswith(e) for e in _ZIP_FAMILY):
        return guessed
    if sniffed:
        return sniffed
    if guessed:
        return guessed
    if head and _looks_like_text(head):
        return "text/plain"
    return "application/octet-stream"


def inline_type(mime: str) -> str:
    """The Content-Type ``view`` sends for ``mime``: itself, or text/plain for scriptable types."""
    return "text/plain" if mime in _SCRIPTABLE else mime
