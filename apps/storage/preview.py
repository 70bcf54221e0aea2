"""Image previews through Pillow (width, height, gravity, quality, background,
output, rotation, opacity, border*). Blocking: call through ``run_blocking``.

Only images of at most ``STORAGE_PREVIEW_MAX_SIZE`` bytes (Appwrite: 10 MB) are transformed;
decoded images are capped at :data:`MAX_PIXELS` so a small file cannot expand into gigabytes
(Pillow decompression-bomb guard).
"""

from __future__ import annotations

import io

from PIL import Image, ImageOps

MAX_PIXELS = 40_000_000  # decoded pixels of the source image
MAX_SIDE = 4000  # pixels, for width and height (Appwrite's range 0-4000)

OUTPUTS = {"jpg": ("JPEG", "image/jpeg"), "jpeg": ("JPEG", "image/jpeg"), "png": ("PNG", "image/png"),
           "webp": ("WEBP", "image/webp"), "gif": ("GIF", "image/gif")}
_FROM_MIME = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp", "image/gif": "gif"}
GRAVITIES = {
    "center": (0.5, 0.5), "top-left": (0, 0), "top": (0.5, 0), "top-right": (1, 0), "left": (0, 0.5),
    "right": (1, 0.5), "bottom-left": (0, 1), "bottom": (0.5, 1), "bottom-right": (1, 1), "auto": (0.5, 0.5),
}
PREVIEWABLE = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "image/tiff"})


def _hex_color(value: str) -> tuple[int, int, int]:
    value = value.lstrip("#")
    return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))


def render(data: bytes, source_mime: str, *, width: int = 0, height: int = 0, gravity: str = "center",
           quality: int = -1, output: str = "", background: str = "", rotation: int = 0,
           opacity: float = 1.0, border_width: int = 0, border_color: str = "") -> tuple[bytes, str]:
    """The transformed image as ``(bytes, MIME type)``.

    ``width``/``height`` of 0 keep the aspect ratio from the other side (both 0: original size);
    both set crop to fill with ``gravity``. ``quality`` -1 keeps the encoder default. ``output``
    empty keeps the source format (jpeg for formats Pillow cannot write back). Raises
    ``ValueError`` for undecodable or oversized images.
    """
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        img = Image.open(io.BytesIO(data))
        # Pillow only raises DecompressionBombError above twice MAX_IMAGE_PIXELS (a warning
        # below): check the declared size before decoding anything.
        if img.width * img.height > MAX_PIXELS:
            raise Image.DecompressionBombError(f"{img.width}x{img.height} is more than {MAX_PIXELS} pixels")
        img.load()
    except (Image.DecompressionBombError, OSError, SyntaxError) as exc:
        raise ValueError(str(exc)) from None
    img = _normalise_mode(ImageOps.exif_transpose(img))
    out_key = output or _FROM_MIME.get(source_mime, "jpg")
    fmt, out_mime = OUTPUTS[out_key]

    if width and height:
        centering = GRAVITIES.get(gravity, (0.5, 0.5))
        img = ImageOps.fit(img, (width, height), method=Image.Resampling.LANCZOS, centering=centering)
    elif width or height:
        w = width or max(1, round(img.width * height / img.height))
        h = height or max(1, round(img.height * width / img.width))
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
    try:
        img.save(buf, format=fmt, **params)
    except OSError as exc:  # pragma: no cover - every mode is RGB/RGBA by now
        raise ValueError(str(exc)) from None
    return buf.getvalue(), out_mime


def _normalise_mode(img: Image.Image) -> Image.Image:
    """The image as RGB or RGBA: borders, backgrounds and every output format take colour
    tuples, which grayscale, palette, 16-bit, float and CMYK/LAB images refuse (TypeError), and
    PNG/GIF cannot write CMYK, LAB, YCbCr, I or F (OSError)."""
    if img.mode in ("RGB", "RGBA"):
        return img
    if img.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F"):
        # Scale wide grayscale to 8 bits before the RGB conversion (it would clip at 255).
        lo, hi = img.getextrema()
        scale = 255 / (hi - lo) if hi > lo else 0
        img = img.convert("F").point(lambda v: (v - lo) * scale).convert("L")
    alpha = img.mode in ("LA", "PA", "La", "RGBa") or (img.mode == "P" and "transparency" in img.info)
    return img.convert("RGBA" if alpha else "RGB")
