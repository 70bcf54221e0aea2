"""Datetimes on the wire: ISO-8601 with milliseconds and offset (contract §3, Models)."""

from __future__ import annotations

import datetime as dt


def iso(value: dt.datetime | None) -> str:
    """``2020-10-15T06:38:00.000+00:00`` for an aware datetime; ``""`` for ``None``."""
    if value is None:
        return ""
    value = value.astimezone(dt.UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}+00:00"
