"""Five-field cron expressions (minute hour day-of-month month day-of-week), as Appwrite's
function ``schedule`` takes them: ``*``, numbers, ranges ``a-b``, steps ``*/n`` / ``a-b/n`` and
lists ``a,b``; day-of-week 0-7 (0 and 7 are Sunday). Times are UTC. When both day fields are
restricted, a day matching either runs (Vixie cron's rule)."""

from __future__ import annotations

import datetime as dt

_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))


def _field(text: str, low: int, high: int) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        rng, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError("cron step must be >= 1")
        if rng == "*":
            start, end = low, high
        elif "-" in rng:
            a, b = rng.split("-", 1)
            start, end = int(a), int(b)
        else:
            start = int(rng)
            end = high if step_text else start
        if not low <= start <= end <= high:
            raise ValueError(f"cron value {part!r} is out of range {low}-{high}")
        out.update(range(start, end + 1, step))
    return frozenset(out)


def parse(expr: str) -> tuple:
    """The allowed values per field and whether both day fields are restricted. Raises ``ValueError`` for a malformed expression."""
    parts = expr.split()
    if len(parts) != 5:
        raise ValueError("Schedule must be a cron expression of 5 fields (minute hour day month weekday)")
    try:
        fields = tuple(_field(p, lo, hi) for p, (lo, hi) in zip(parts, _BOUNDS, strict=True))
    except ValueError as exc:
        raise ValueError(f"Invalid cron expression: {exc}") from None
    dow = fields[4]
    if 7 in dow:
        dow = dow | {0}
    return (*fields[:4], dow, parts[2] != "*" and parts[4] != "*")


def next_after(expr: str, after: dt.datetime) -> dt.datetime:
    """The first minute strictly after ``after`` (aware, UTC) that ``expr`` matches."""
    minutes, hours, days, months, dows, both = parse(expr)
    t = after.astimezone(dt.UTC).replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    limit = t + dt.timedelta(days=366 * 5)
    while t < limit:
        if t.month not in months:
            t = (t.replace(day=1, hour=0, minute=0) + dt.timedelta(days=32)).replace(day=1)
            continue
        dom_ok, dow_ok = t.day in days, (t.isoweekday() % 7) in dows
        if not ((dom_ok or dow_ok) if both else (dom_ok and dow_ok)):
            t = t.replace(hour=0, minute=0) + dt.timedelta(days=1)
            continue
        if t.hour not in hours:
            t = t.replace(minute=0) + dt.timedelta(hours=1)
            continue
        if t.minute not in minutes:
            t += dt.timedelta(minutes=1)
            continue
        return t
    raise ValueError("cron expression never matches")
