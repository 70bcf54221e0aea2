"""Tasks used only by the worker tests (importable by the worker process)."""

from __future__ import annotations

import time
from pathlib import Path

from django.tasks import task


@task(queue_name="default")
def slow_marker(*, path: str, seconds: float) -> None:
    """Append ``start`` to ``path``, sleep ``seconds``, append ``done``."""
    with Path(path).open("a") as fh:
        fh.write("start\n")
    time.sleep(seconds)
    with Path(path).open("a") as fh:
        fh.write("done\n")


@task(queue_name="default")
def always_fails(*, path: str) -> None:
    """Append ``try`` to ``path`` and raise."""
    with Path(path).open("a") as fh:
        fh.write("try\n")
    raise ValueError("this task always fails")
