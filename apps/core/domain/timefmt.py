"""Datetimes on the wire: ISO-8601 with milliseconds and offset."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from typing import Any


def iso(value: dt.datetime | None) -> str:
    """``2020-10-15T06:38:00.000+00:00`` for an aware datetime; ``""`` for ``None``."""
    if value is None:
        return ""
    return _iso(value)


def iso_stored(value: Any) -> str:
    """:func:`iso` of a timestamp column as a driver returns it: an aware datetime
    (PostgreSQL), or the text SQLite keeps, UTC without an offset (``2020-10-15 06:38:00.123456``,
    or without the fraction when it is zero), rewritten without parsing it; ``""`` for ``None``.
    Milliseconds are truncated, as ``isoformat(timespec="milliseconds")`` does."""
    if type(value) is str:
        if len(value) == 26 and value[10] == " " and value[19] == ".":
            return f"{value[:10]}T{value[11:23]}+00:00"
        if len(value) == 19 and value[10] == " ":
            return f"{value[:10]}T{value[11:]}.000+00:00"
        value = dt.datetime.fromisoformat(value)
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return iso(value)


@lru_cache(maxsize=1024)  # a bulk write's rows share their timestamps
def _iso(value: dt.datetime) -> str:
    # isoformat of a UTC datetime ends in "+00:00"; 3x faster than strftime.
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds")
