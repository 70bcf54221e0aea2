"""Serves the built web demo (``examples/web-notes/dist``) at ``/demo/`` when ``DEMO_ENABLED``.

A tiny static file view, not a general one: files under ``settings.DEMO_DIR`` only, GET/HEAD,
content types from the extension, ``index.html`` for paths that are not files (the app's own
routes), and long caching only for Vite's content-hashed ``assets/``.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

# Extensions whose type must not depend on the host's mime.types (module scripts need a
# JavaScript type, or the browser refuses them).
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webmanifest": "application/manifest+json",
}


def content_type_of(path: Path) -> str:
    """The Content-Type for a file name: the table above, else ``mimetypes``, else bytes."""
    suffix = path.suffix.lower()
    if suffix in CONTENT_TYPES:
        return CONTENT_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


def resolve_file(root: Path, path: str) -> Path | None:
    """The file under ``root`` that ``path`` names, or ``None`` (missing, a directory, or
    outside ``root`` through ``..`` or a symlink)."""
    root = root.resolve()
    target = (root / path.lstrip("/")).resolve()
    if target != root and root not in target.parents:
        return None
    return target if target.is_file() else None


@require_safe
def demo_file(request: HttpRequest, path: str = "") -> HttpResponse:
    """``GET /demo/<path>``: the file, or ``index.html`` for a path without an extension.

    Raises ``Http404`` for a missing file with an extension (a missing asset must not turn into
    an HTML page the browser then fails to run as a script).
    """
    root = Path(settings.DEMO_DIR)
    target = resolve_file(root, path) if path else None
    if target is None:
        if Path(path).suffix:
            raise Http404("no such demo file")
        target = resolve_file(root, "index.html")
        if target is None:
            raise Http404("the demo is not built")
    response = HttpResponse(target.read_bytes(), content_type=content_type_of(target))
    hashed = target.parent.name == "assets"
    response["Cache-Control"] = "public, max-age=31536000, immutable" if hashed else "no-cache"
    return response
