"""Runtime images: built locally from the recipes in ``apps/functions/runtimes``, no registry.

Each image is tagged with a hash of its recipe (the files of the recipe directory and the base
image's ID): ``localhost/appwrite-runtime-<key>:<hash>``. :func:`ensure_image` builds it only when
that tag is missing, so a changed recipe is rebuilt and an unchanged one is reused (a test
session or ``manage.py functionsimages`` builds each image once). The base image
``localhost/debian:trixie-slim`` is made from Debian's archive by ``deploy/debian-base.sh``.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tarfile
import threading

from django.conf import settings

from apps.functions.runtimes import RUNTIMES, recipe_dir

log = logging.getLogger("apps.functions")
_lock = threading.Lock()
_hashes: dict[str, str] = {}


def recipe_hash(key: str) -> str:
    """16 hex digits over the recipe's files (names and bytes) and the base image name."""
    if key not in _hashes:
        digest = hashlib.sha256(settings.FUNCTIONS_BASE_IMAGE.encode())
        folder = recipe_dir(key)
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
        _hashes[key] = digest.hexdigest()[:16]
    return _hashes[key]


def image_name(key: str) -> str:
    return f"localhost/appwrite-runtime-{key}:{recipe_hash(key)}"


def _context(key: str) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        folder = recipe_dir(key)
        for name in sorted(os.listdir(folder)):
            info = tar.gettarinfo(os.path.join(folder, name), arcname=name)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            info.uid = info.gid = 0
            with open(os.path.join(folder, name), "rb") as f:
                tar.addfile(info, f)
    buf.seek(0)
    return buf


def ensure_image(client, key: str) -> str:
    """The image of runtime ``key``, built first when missing (blocking; minutes on a cold
    cache). Raises ``docker.errors.BuildError`` / ``ImageNotFound`` (base image missing)."""
    import docker

    name = image_name(key)
    with _lock:
        try:
            client.images.get(name)
            return name
        except docker.errors.ImageNotFound:
            pass
        client.images.get(settings.FUNCTIONS_BASE_IMAGE)  # ImageNotFound: run deploy/debian-base.sh
        log.info("building runtime image %s", name)
        client.images.build(fileobj=_context(key), custom_context=True, tag=name, rm=True, forcerm=True,
                            dockerfile="Containerfile", buildargs={"BASE_IMAGE": settings.FUNCTIONS_BASE_IMAGE},
                            labels={"appwrite-runtime": key, "recipe-hash": recipe_hash(key)})
        return name


def ensure_all(client) -> list[str]:
    return [ensure_image(client, key) for key in RUNTIMES]
