"""Older response formats of the storage models (see ``apps.core.http.formats``): below 1.9.0 a File
has no ``sizeActual`` (the 1.8 models end at ``sizeOriginal``)."""

from __future__ import annotations

from apps.core.http import formats


def register() -> None:
    formats.register("file", "1.9.0", formats.drop("sizeActual"), lists={"fileList": "files"})
