"""Appwrite IDs."""

from __future__ import annotations

import re
import secrets
import time
from typing import Annotated

from pydantic import StringConstraints, WithJsonSchema

from apps.core.errors import invalid_argument

_CUSTOM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,35}")
# The same rules as JSON schema patterns (the OpenAPI document).
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,35}$"
NEW_ID_PATTERN = r"^(unique\(\)|[A-Za-z0-9][A-Za-z0-9._-]{0,35})$"

#: The ID of a resource being created: ``unique()`` or a custom ID. Validated by the handler's
#: :func:`resolve_id` (its message is Appwrite's); the JSON schema states both forms.
NewId = Annotated[str, StringConstraints(min_length=1, max_length=36),
                  WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 36, "pattern": NEW_ID_PATTERN})]


def unique_id() -> str:
    """A new 20-hex-char ID: 13 of ``uniqid()`` (8 seconds + 5 microseconds) + 7 random."""
    now = time.time()
    seconds = int(now)
    micros = int((now - seconds) * 1_000_000)
    return f"{seconds:08x}{micros:05x}{secrets.token_hex(4)[:7]}"


def is_valid_id(value: str) -> bool:
    """True for 1-36 chars of ``[A-Za-z0-9._-]`` not starting with ``_``, ``.`` or ``-``."""
    return bool(_CUSTOM_ID.fullmatch(value))


def resolve_id(value: str, param: str) -> str:
    """``unique()`` becomes a fresh ID; anything else must be a valid custom ID.

    Raises 400 ``general_argument_invalid`` naming ``param`` otherwise (Appwrite: UID validator).
    """
    if value == "unique()":
        return unique_id()
    if not is_valid_id(value):
        raise invalid_argument(
            param,
            "Parameter must contain at most 36 chars. Valid chars are a-z, A-Z, 0-9, period, "
            "hyphen, and underscore. Can't start with a special char",
        )
    return value
