"""The development ``SECRET_KEY``: generated once, kept in a file beside the embedded database.

Without ``SECRET_KEY`` in the environment (never in production: ``APP_ENV=production`` refuses to
start without it), the key is read from ``secret_key`` in the folder of ``SQLITE_PATH`` (the
setting ``SECRET_KEY_FILE``). On the first start the file does not exist: a random key is made
(``secrets.token_urlsafe(64)``, 512 bits), written with mode 0600 and announced once on stderr
(logging is not configured yet while settings load). Later starts, and every other process on
the same folder, read the same key, so JWTs and admin sessions survive restarts and are
accepted by each of them.

Creation is atomic: the key is written to a temporary file that is then hard-linked to the final
name, so a process starting at the same moment sees either no file or the whole key, and the
loser of a race reads the winner's key.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

MIN_LENGTH = 32  # characters, as the production check asks of a configured key


def development_secret_key(path: Path) -> str:
    """The key kept in ``path``, made and saved first when the file does not exist.

    Returns the key (surrounding whitespace stripped). Raises ``ImproperlyConfigured`` when the
    file cannot be read or written, or holds fewer than :data:`MIN_LENGTH` characters.
    """
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        key = _create(path)
    except OSError as exc:
        raise ImproperlyConfigured(f"SECRET_KEY is not set and {path} cannot be read ({exc}). "
                                   "Set SECRET_KEY, or make the file readable.") from None
    if len(key) < MIN_LENGTH:
        raise ImproperlyConfigured(f"{path} holds no usable SECRET_KEY (fewer than {MIN_LENGTH} characters). "
                                   "Delete it to have a new key generated, or set SECRET_KEY.")
    return key


def _create(path: Path) -> str:
    key = secrets.token_urlsafe(64)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(key + "\n")
            os.link(tmp, path)
        finally:
            os.unlink(tmp)
    except FileExistsError:  # another process made it first: use the same key
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ImproperlyConfigured(f"SECRET_KEY is not set and no key could be saved to {path} ({exc}). "
                                   "Set SECRET_KEY, or SQLITE_PATH to a writable folder.") from None
    print(f"SECRET_KEY is not set: generated a new random key and saved it to {path} "
          "(reused on later starts; set SECRET_KEY in production).", file=sys.stderr, flush=True)
    return key
