"""Image previews through Pillow (width, height, gravity, quality, background,
output, rotation, opacity, border*). Blocking: call through ``run_blocking``.

Only images of at most ``STORAGE_PREVIEW_MAX_SIZE`` bytes (Appwrite: 10 MB) are transformed.
Memory is bounded three ways (a 40 Mpx image cost ~500 MB per render before):

* images declaring more than ``STORAGE_PREVIEW_MAX_PIXELS`` are refused before any pixel is
  decoded (Pillow's own bomb guard only raises above twice its limit);
* only what the output needs is decoded and worked on: JPEG decodes at 1/2, 1/4 or 1/8 scale
  when the output is that much smaller (``draft``), other images are reduced by an integer
  factor (``reduce``) right after decoding, before rotation, borders and conversions; and no
  render works on more than :data:`WORK_MAX_PIXELS` (Appwrite's largest preview, 4000 x 4000): an
  image larger than that asked at its own size comes back scaled down to it;
* the renders of one process hold at most ``STORAGE_PREVIEW_PIXEL_BUDGET`` decoded pixels at
  once (:class:`PixelBudget`); a render waits for its share (one larger than the whole budget
  runs alone).

Freed pixels go back to the system at once: Pillow allocates them in 16 MB blocks with
``malloc``, which glibc would otherwise keep in each thread's heap after the first free (its
dynamic mmap threshold), so a few executor threads held several renders' worth each
(:func:`apps.core.drivers.runtime.return_large_blocks`).
"""

from __future__ import annotations

import io
import math
import threading
from contextlib import contextmanager
from typing import cast

from django.conf import settings
from PIL import Image, ImageOps

MAX_SIDE = 4000  # pixels, for width and height (Appwrite's range 0-4000)
WORK_MAX_PIXELS = MAX_SIDE * MAX_SIDE

OUTPUTS = {"jpg": ("JPEG", "image/jpeg"), "jpeg": ("JPEG", "image/jpeg"), "png": ("PNG", "image/png"),
           "webp": ("WEBP", "image/webp"), "gif": ("GIF", "image/gif")}
_FROM_MIME = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif"}
GRAVITIES = {
    "center": (0.5, 0.5), "top-left": (0, 0), "top": (0.5, 0), "top-right": (1, 0), "left": (0, 0.5),
    "right": (1, 0.5), "bottom-left": (0, 1), "bottom": (0.5, 1), "bottom-right": (1, 1), "auto": (0.5, 0.5),
}
PREVIEWABLE = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "image/tiff"})
_TRANSPOSED = {5, 6, 7, 8}  # EXIF orientations that swap width and height


class PixelBudget:
    """Decoded pixels the renders of this process may hold at once (thread-safe; a render runs
    in an executor thread under ASGI, in the worker under WSGI)."""

    def __init__(self, total: int):
        self.total, self.used = total, 0
        self._cond = threading.Condition()

    @contextmanager
    def take(self, pixels: int):
        """Hold ``pixels`` (at most the whole budget) for the block; waits until they are free."""
        pixels = min(pixels, self.total)
        with self._cond:
            self._cond.wait_for(lambda: self.used == 0 or self.used + pixels <= self.total)
            self.used += pixels
        try:
            yield
        finally:
            with self._cond:
                self.used -= pixels
                self._cond.notify_all()


_budget: list[PixelBudget] = []


def _pixel_budget() -> PixelBudget:
    if not _budget:
        _budget.append(PixelBudget(settings.STORAGE_PREVIEW_PIXEL_BUDGET))
    return _budget[0]


def _hex_color(value: str) -> tuple[int, int, int]:
    value = value.lstrip("#")
    return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))


def _needed(size: tuple[int, int], width: int, height: int) -> tuple[int, int]:
    """The source size (as displayed) the output needs: the fit's cover size when both sides are
    given, the aspect-kept size for one, the image's own size for none."""
    w, h = size
    if width and height:
        scale = max(width / w, height / h)
    elif width or height:
        scale = width / w if width else height / h
    else:
        scale = 1.0
    return max(1, round(w * scale)), max(1, round(h * scale))


def _open(data: bytes, width: int, height: int) -> tuple[Image.Image, int, int, tuple[int, int]]:
    """The image opened (header read, JPEG draft scale set, nothing decoded), the
    ``(width, height)`` to ask of the render, and the stored-orientation size it needs.

    A 0/0 request of an image over :data:`WORK_MAX_PIXELS` gets the width of the image reduced by
    the smallest integer factor that fits (a JPEG decodes straight at that scale)."""
    max_pixels = settings.STORAGE_PREVIEW_MAX_PIXELS
    Image.MAX_IMAGE_PIXELS = max(max_pixels, WORK_MAX_PIXELS)
    img = Image.open(io.BytesIO(data))
    # Pillow only raises DecompressionBombError above twice MAX_IMAGE_PIXELS (a warning below):
    # check the declared size before decoding anything.
    if img.width * img.height > max_pixels:
        raise Image.DecompressionBombError(f"{img.width}x{img.height} is more than {max_pixels} pixels")
    swapped = img.getexif().get(0x0112, 1) in _TRANSPOSED
    shown = (img.height, img.width) if swapped else img.size
    if not (width or height) and shown[0] * shown[1] > WORK_MAX_PIXELS:
        factor = math.ceil(math.sqrt(shown[0] * shown[1] / WORK_MAX_PIXELS))
        width = shown[0] // factor
    need = _needed(shown, width, height)
    if swapped:
        need = (need[1], need[0])
    if img.format == "JPEG":
        img.draft(None, need)  # decode at the smallest 1/2^n scale still >= need
    return img, width, height, need


def _load_reduced(img: Image.Image, need: tuple[int, int]) -> Image.Image:
    """Decode ``img`` and reduce it by the largest integer factor that keeps it >= ``need``."""
    img.load()
    factor = min(img.width // need[0], img.height // need[1])
    if factor >= 2:
        if img.mode in ("1", "P") or img.mode.startswith("I;16"):  # modes reduce() refuses
            img = _normalise_mode(img)
        img = img.reduce(factor)  # keeps img.info (EXIF orientation, transparency)
    return img


def render(data: bytes, source_mime: str, *, width: int = 0, height: int = 0, gravity: str = "center",
           quality: int = -1, output: str = "", background: str = "", rotation: int = 0,
           opacity: float = 1.0, border_width: int = 0, border_color: str = "") -> tuple[bytes, str]:
    """The transformed image as ``(bytes, MIME type)``.

    ``width``/``height`` of 0 keep the aspect ratio from the other side (both 0: original size,
    reduced below :data:`WORK_MAX_PIXELS`); both set crop to fill with ``gravity``. ``quality`` -1
    keeps the encoder default. ``output`` empty keeps the source format (jpeg for formats Pillow
    cannot write back). Raises ``ValueError`` for undecodable or oversized images.

    The render holds, from decoding to encoding, its share of the process's pixel budget: the
    decoded pixels plus the output's (twice for a rotation, which expands the canvas).
    """
    try:
        img, width, height, need = _open(data, width, height)
        out = width * height if width and height else need[0] * need[1]
        with _pixel_budget().take(img.width * img.height + out * (2 if rotation else 1)):
            # No name here may keep the decoded image: _transform drops each stage as it goes.
            held = [img]
            del img
            return _transform(_load_reduced(held.pop(), need), source_mime, width, height, gravity, quality,
                              output, background, rotation, opacity, border_width, border_color)
    except (Image.DecompressionBombError, OSError, SyntaxError) as exc:
        raise ValueError(str(exc)) from None


def _transform(img, source_mime, width, height, gravity, quality, output, background, rotation, opacity,
               border_width, border_color) -> tuple[bytes, str]:
    img = _normalise_mode(ImageOps.exif_transpose(img))
    out_key = output or _FROM_MIME.get(source_mime, "jpg")
    fmt, out_mime = OUTPUTS[out_key]

    if width and height:
        centering = GRAVITIES.get(gravity, (0.5, 0.5))
        img = ImageOps.fit(img, (width, height), method=Image.Resampling.LANCZOS, centering=centering)
    elif width or height:
        w = width or max(1, round(img.width * height / img.height))
        h = height or max(1, round(img.height * width / img.width))
        if (w, h) != img.size:
            img = img.resize((w, h), Image.Resampling.LANCZOS)

    if opacity < 1.0:
        img = img.convert("RGBA")
        alpha = img.getchannel("A").point(lambda a: int(a * max(0.0, opacity)))
        img.putalpha(alpha)
    if rotation:
        img = img.convert("RGBA").rotate(-rotation, expand=True)
    if border_width:
        img = ImageOps.expand(img, border=border_width, fill=_hex_color(border_color or "000000"))

    has_alpha = img.mode in ("RGBA", "LA") or (img.mode == "P" and "transparency" in img.info)
    if has_alpha and (background or fmt == "JPEG"):
        rgba = img.convert("RGBA")
        base = Image.new("RGBA", rgba.size, (*_hex_color(background or "ffffff"), 255))
        base.alpha_composite(rgba)
        img = base.convert("RGB")
    if fmt == "JPEG" and img.mode != "RGB":
        img = img.convert("RGB")

    buf = io.BytesIO()
    params = {}
    if quality >= 0 and fmt in ("JPEG", "WEBP"):
        params["quality"] = max(1, min(100, quality))
    img.save(buf, format=fmt, **params)  # an OSError here becomes render's ValueError
    return buf.getvalue(), out_mime


def _normalise_mode(img: Image.Image) -> Image.Image:
    """The image as RGB or RGBA: borders, backgrounds and every output format take colour
    tuples, which grayscale, palette, 16-bit, float and CMYK/LAB images refuse (TypeError), and
    PNG/GIF cannot write CMYK, LAB, YCbCr, I or F (OSError)."""
    if img.mode in ("RGB", "RGBA"):
        return img
    if img.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F"):
        # Scale wide grayscale to 8 bits before the RGB conversion (it would clip at 255).
        lo, hi = cast("tuple[float, float]", img.getextrema())  # one band: (min, max)
        scale = 255 / (hi - lo) if hi > lo else 0
        img = img.convert("F").point(lambda v: (v - lo) * scale).convert("L")
    alpha = img.mode in ("LA", "PA", "La", "RGBa") or (img.mode == "P" and "transparency" in img.info)
    return img.convert("RGBA" if alpha else "RGB")
