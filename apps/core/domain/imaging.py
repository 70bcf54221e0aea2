"""Decoding untrusted images with bounded memory (Pillow).

A small compressed file can declare an enormous canvas (a "decompression bomb": a few hundred KB
of PNG that decodes to gigabytes). :func:`open_bounded` reads only the header first and refuses
images whose declared width x height exceeds the caller's pixel budget, before any pixel is
decoded. Pillow's own guard (``Image.MAX_IMAGE_PIXELS``) only raises above twice its limit and
merely warns below, so it is not relied on.
"""

from __future__ import annotations

import io

from PIL import Image


class ImageRefused(ValueError):
    """Not a decodable image, or larger than the pixel budget; the message says which."""


def open_bounded(data: bytes, *, max_pixels: int, formats: tuple[str, ...] | None = None) -> Image.Image:
    """The decoded (loaded) image of ``data``, whose declared size is at most ``max_pixels``
    pixels. ``formats`` restricts the decoders Pillow may try (e.g. ``("PNG", "JPEG")``).
    The largest frame of a multi-size ICO is taken. Raises :class:`ImageRefused`."""
    try:
        img = Image.open(io.BytesIO(data), formats=formats)
        if img.width * img.height > max_pixels:
            raise ImageRefused(f"{img.width}x{img.height} is more than {max_pixels} pixels")
        img.load()
    except ImageRefused:
        raise
    except (Image.DecompressionBombError, OSError, SyntaxError, ValueError, Image.UnidentifiedImageError) as exc:
        raise ImageRefused(f"not a decodable image: {exc.__class__.__name__}") from None
    return img
