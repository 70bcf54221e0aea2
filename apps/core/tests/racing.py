"""Firing requests at one live server at the same moment (race tests of every app)."""

from __future__ import annotations

import threading
import time

from conftest import Api


def fire(api: Api, calls: list[tuple[str, str, dict | None]]) -> list:
    """Send ``calls`` ``(method, path, json)`` at once, each on its own connection."""
    barrier = threading.Barrier(len(calls))
    out: list = [None] * len(calls)

    def run(i, method, path, body):
        client = Api(api.server, api.project)
        barrier.wait()
        out[i] = client.call(method, path, json=body, key=True, timeout=60)

    threads = [threading.Thread(target=run, args=(i, *c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def check(answers, allowed: dict[int, set[str] | None]) -> None:
    """Every answer's status is in ``allowed``; for error statuses its type is one of the set."""
    for r in answers:
        assert r.status_code in allowed, (r.status_code, r.text)
        types = allowed[r.status_code]
        if types is not None:
            assert r.json()["type"] in types, r.text


def eventually(condition, timeout: float = 3.0) -> None:
    """Assert ``condition()`` becomes true within ``timeout`` seconds. The WSGI build's other
    worker drops its cached copy of a changed table when the invalidation reaches it over Redis
    pub/sub, a moment after the write answered."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "still not true after the caches were invalidated"
        time.sleep(0.05)
