"""Choosing a page's favicon (Appwrite's rule, minus SVG): among ``<link rel="icon">`` and
``rel="shortcut icon"`` with a ``.ico``, ``.png``, ``.jpg`` or ``.jpeg`` path, the one with the
largest declared ``sizes``; none -> ``/favicon.ico`` of the page's origin.

SVG icons are skipped: an SVG is a document that can reference other resources, and this
server returns raster images only (Appwrite returns a sanitised SVG instead).
"""

from __future__ import annotations

import posixpath
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

RASTER = ("ico", "png", "jpg", "jpeg")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "link" and len(self.links) < 1000:
            self.links.append({k.lower(): (v or "") for k, v in attrs})


def pick_icon(page_url: str, html: str) -> tuple[str, str]:
    """``(absolute icon URL, extension)`` for the page at ``page_url`` with body ``html``."""
    parser = _Links()
    try:
        parser.feed(html)
    except Exception:  # html.parser is lenient; this is belt and braces for odd input
        pass
    best, best_space = None, -1
    for link in parser.links:
        if link.get("rel", "").strip().lower() not in ("icon", "shortcut icon") or not link.get("href"):
            continue
        absolute = urljoin(page_url, link["href"].strip())
        ext = posixpath.splitext(urlsplit(absolute).path)[1].lstrip(".").lower()
        if ext not in RASTER:
            continue
        w, _, h = link.get("sizes", "").lower().partition("x")
        space = (int(w) if w.isdigit() else 0) * (int(h) if h.isdigit() else 0)
        if space >= best_space:
            best, best_space = (absolute, ext), space
    if best:
        return best
    origin = urlsplit(page_url)
    return f"{origin.scheme}://{origin.netloc}/favicon.ico", "ico"
