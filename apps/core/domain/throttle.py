"""Rate-limited reporting: count occurrences, report at most once per interval."""

from __future__ import annotations

import math
import time


class Throttle:
    """Counts events; :meth:`hit` returns how many happened since the last report when a new
    report is due (at most one per ``interval`` seconds, a monotonic clock), else ``None``."""

    def __init__(self) -> None:
        self.last = -math.inf
        self.pending = 0

    def hit(self, interval: float, count: int = 1) -> int | None:
        self.pending += count
        now = time.monotonic()
        if now - self.last < interval:
            return None
        due, self.last, self.pending = self.pending, now, 0
        return due
