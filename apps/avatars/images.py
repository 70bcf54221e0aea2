"""Drawing the Avatars images (Pillow, segno, resvg). Blocking: call through ``run_blocking``.

Every output is a PNG of at most 2000 x 2000 pixels; every decoded input goes through
``apps.core.domain.imaging.open_bounded`` with :data:`MAX_SOURCE_PIXELS`, so one request holds a bounded
amount of memory whatever it is sent.
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont, ImageOps

from apps.core.domain.imaging import open_bounded

MAX_SOURCE_PIXELS = 16_000_000  # decoded pixels of a remote image (64 MB as RGBA)
# Appwrite's initials palette; the colour is picked from the initials so a name keeps its colour.
INITIALS_PALETTE = ("#FD366E", "#FE9567", "#7C67FE", "#68A3FE", "#85DBD8")


def to_png(img: Image.Image, quality: int = -1) -> bytes:
    """PNG bytes. ``quality`` (0-100, -1 = default) maps to zlib effort as Imagick does for PNG."""
    buf = io.BytesIO()
    level = 6 if quality < 0 else max(0, min(9, quality // 10))
    img.save(buf, format="PNG", compress_level=level)
    return buf.getvalue()


def fit(img: Image.Image, width: int, height: int) -> Image.Image:
    """Resize and centre-crop to ``width`` x ``height``; a 0 side follows the aspect ratio of
    the other; both 0 keep the size (Appwrite's ``Image::crop``)."""
    if img.mode not in ("RGB", "RGBA"):
        img = img.convert("RGBA")
    if width and height:
        return ImageOps.fit(img, (width, height), method=Image.Resampling.LANCZOS)
    if width or height:
        w = width or max(1, round(img.width * height / img.height))
        h = height or max(1, round(img.height * width / img.width))
        return img.resize((w, h), Image.Resampling.LANCZOS)
    return img


def render_icon(path: str, width: int, height: int, quality: int) -> bytes:
    """An icon file of an installed set (PNG or SVG) at ``width`` x ``height`` as PNG."""
    if path.endswith(".svg"):
        import resvg_py

        # Render the trusted vector at the larger requested side, then fit.
        side = max(width, height, 1) if (width or height) else 0
        with open(path, encoding="utf-8") as fh:
            svg = fh.read()
        raster = bytes(resvg_py.svg_to_bytes(svg_string=svg, width=side or None, skip_system_fonts=True))
        img: Image.Image = Image.open(io.BytesIO(raster))
        img.load()
    else:
        with open(path, "rb") as fh:
            img = open_bounded(fh.read(), max_pixels=MAX_SOURCE_PIXELS)
    return to_png(fit(img, width, height), quality)


def render_remote(data: bytes, width: int, height: int) -> bytes:
    """A fetched image, decoded under the pixel budget, fitted and encoded as PNG. Raises
    ``apps.core.domain.imaging.ImageRefused`` for anything else."""
    img = open_bounded(data, max_pixels=MAX_SOURCE_PIXELS)
    img = ImageOps.exif_transpose(img)
    return to_png(fit(img, width, height), 80)


def initials_of(name: str) -> str:
    """The first letters of the first two words that start with a letter or digit (words split on
    spaces, else on underscores), upper-cased (Appwrite's rule)."""
    upper = name.upper()
    words = upper.split(" ")
    if len(words) == 1:
        words = upper.split("_")
    out = ""
    for index, word in enumerate(words):
        if word and word[0].isalnum():
            out += word[0]
            if index >= 1:
                break
    return out


def initials_colour(initials: str) -> str:
    """Appwrite's pick: the last digit of the sum of the initials' code points, modulo the
    palette size."""
    digit = int(str(sum(ord(c) for c in initials))[-1]) if initials else 0
    return INITIALS_PALETTE[digit % len(INITIALS_PALETTE)]


def render_initials(name: str, width: int, height: int, background: str) -> bytes:
    """A ``background``-coloured rectangle (``#rrggbb``; empty = :func:`initials_colour`) with
    the initials cut out (transparent), as Appwrite draws them. 0 sides default to 500."""
    width, height = width or 500, height or 500
    initials = initials_of(name)
    colour = "#" + background.lstrip("#") if background else initials_colour(initials)
    img = Image.new("RGBA", (width, height), colour)
    if initials:
        mask = Image.new("L", (width, height), 0)
        font = ImageFont.load_default(size=max(1, min(width, height) // 2))
        ImageDraw.Draw(mask).text((width / 2, height / 2), initials, fill=255, font=font, anchor="mm")
        img.putalpha(ImageOps.invert(mask))
    return to_png(img)


def render_qr(text: str, size: int, margin: int) -> bytes:
    """A QR code of ``text`` (error correction L, as Appwrite's generator defaults to) with a
    quiet zone of ``margin`` modules, scaled to ``size`` x ``size`` pixels."""
    import segno

    qr = segno.make(text, error="l", boost_error=False, micro=False)
    modules = qr.symbol_size(scale=1, border=margin)[0]
    buf = io.BytesIO()
    qr.save(buf, kind="png", scale=max(1, -(-size // modules)), border=margin)
    img = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return to_png(img.resize((size, size), Image.Resampling.NEAREST), 90)
