"""``/avatars/screenshots``: a page rendered by headless Chromium (Debian's ``chromium`` package).

The browser is ``AVATARS_SCREENSHOT_BROWSER`` (default: ``chromium`` on the ``PATH``); without one
the route answers 503 ``general_service_disabled``. One run is one short-lived browser process
(``--headless --screenshot``) with a fresh profile in a temporary directory, killed with its
process group after ``AVATARS_SCREENSHOT_TIMEOUT`` seconds.

Server-side request forgery, under the rules of :mod:`apps.avatars.fetch`: the URL's host must
resolve to public addresses only (``AVATARS_FETCH_ALLOW_NETWORKS`` exempts networks), and the
browser may reach **that host alone, at the address that was checked**: the host name is mapped
to it (``--host-resolver-rules``), every other name resolves to nothing, and every other request
(another host, an IP literal, loopback) is sent to a proxy that does not exist. A page's resources
from other hosts are therefore missing from the picture, and a redirect to another host fails.
WebRTC may not use UDP outside the proxy.

Blocking (``subprocess``): call through ``run_blocking``.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tempfile
from urllib.parse import urlsplit

from django.conf import settings

from apps.avatars import fetch
from apps.avatars.images import fit
from apps.core.domain.imaging import open_bounded

# Decoded pixels of one screenshot: a 1920 x 1080 viewport at scale 3 is 18.7 M.
MAX_SHOT_PIXELS = 20_000_000
_DEAD_PROXY = "http://proxy.invalid:1"  # resolves to nothing under the resolver rules


class ShotFailed(Exception):
    """The browser could not render the page (timeout, crash, no picture). Message is safe."""


def browser() -> str | None:
    """The browser executable, or ``None`` when screenshots are off or none is installed."""
    name = settings.AVATARS_SCREENSHOT_BROWSER
    return shutil.which(name) if name else None


def target(url: str) -> tuple[str, str]:
    """``(host, checked address)`` of ``url``. Raises :class:`apps.avatars.fetch.FetchRefused`
    for a scheme other than http(s), a missing host, or a non-public address."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise fetch.FetchRefused(f"Scheme '{parts.scheme}' is not allowed.")
    host = parts.hostname
    if not host:
        raise fetch.FetchRefused("URL has no host.")
    try:
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise fetch.FetchRefused("URL has an invalid port.") from None
    addresses = fetch._checked_addresses(host, port, fetch.resolve)
    return host, addresses[0][1][0]


def _flags(host: str, address: str, p, profile: str, out: str) -> list[str]:
    shown = f"[{host}]" if ":" in host else host
    flags = [
        "--headless", "--disable-gpu", "--hide-scrollbars", "--mute-audio", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-sync", "--disable-default-apps",
        "--disable-background-networking", "--disable-component-update", "--disable-breakpad",
        f"--user-data-dir={profile}", f"--screenshot={out}",
        f"--window-size={p.viewportWidth},{p.viewportHeight}",
        f"--force-device-scale-factor={p.scale}",
        f"--host-resolver-rules=MAP {host} {address}, MAP * ~NOTFOUND",
        f"--proxy-server={_DEAD_PROXY}", f"--proxy-bypass-list=<-loopback>;{shown}",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium's sandbox refuses to start as root
    if p.theme == "dark":
        flags.append("--force-dark-mode")
    if p.userAgent:
        flags.append(f"--user-agent={p.userAgent}")
    language = p.headers.get("accept-language") or p.locale
    if language:
        flags += [f"--lang={p.locale or language.split(',')[0]}", f"--accept-lang={language}"]
    if p.sleep:
        flags.append(f"--virtual-time-budget={p.sleep * 1000}")
    return flags


def capture(url: str, host: str, address: str, p) -> bytes:
    """The screenshot of ``url`` (``p``: the route's parameters), resized and encoded as asked.
    Raises :class:`ShotFailed`."""
    exe = browser()
    if exe is None:
        raise ShotFailed("no browser")
    with tempfile.TemporaryDirectory(prefix="avatars-shot-") as tmp:
        out = os.path.join(tmp, "shot.png")
        env = {**os.environ, "HOME": tmp}
        if p.timezone:
            env["TZ"] = p.timezone
        proc = subprocess.Popen([exe, *_flags(host, address, p, os.path.join(tmp, "profile"), out), url],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            proc.wait(timeout=settings.AVATARS_SCREENSHOT_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ShotFailed("The page took too long to render.") from None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the browser's helper processes too
            except ProcessLookupError:
                pass
            proc.wait()
        try:
            with open(out, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            raise ShotFailed("The browser made no picture of the page.") from None
    return encode(raw, p.width, p.height, p.quality, p.output)


def encode(raw: bytes, width: int, height: int, quality: int, output: str) -> bytes:
    """``raw`` (PNG) fitted to ``width`` x ``height`` (0 = keep) in ``output`` format."""
    img = fit(open_bounded(raw, max_pixels=MAX_SHOT_PIXELS, formats=("PNG",)), width, height)
    fmt = {"jpg": "JPEG", "jpeg": "JPEG", "gif": "GIF", "webp": "WEBP"}.get(output, "PNG")
    buf = io.BytesIO()
    if fmt == "PNG":
        img.save(buf, format="PNG", compress_level=6 if quality < 0 else max(0, min(9, quality // 10)))
    elif fmt == "GIF":
        img.save(buf, format="GIF")
    else:
        if fmt == "JPEG":
            img = img.convert("RGB")
        img.save(buf, format=fmt, quality=90 if quality < 0 else quality)
    return buf.getvalue()


CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
                 "webp": "image/webp", "": "image/png"}
