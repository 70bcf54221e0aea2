"""Who is writing an unfinished file's bytes, and whether that writer can still finish.

A request that stores a file's bytes (a single-request upload, or the assembly of a chunked
one) first writes a *lease* into the file row: ``lease_owner`` names the process and the
attempt, ``lease_expires`` bounds it. Another request may take the file over (replace or
resume it) only when the lease is no longer *held*:

* the owner process is gone: on Linux the owner string carries the kernel boot ID, the PID
  namespace, the PID and the process start time (``/proc``), so a request on the same machine
  and namespace sees at once that the owner died (``kill -9``, OOM, a reboot), even if its PID
  was reused, with no wait;
* or ``lease_expires`` has passed (the only test possible for an owner on another machine or in
  another container, whose process table cannot be read from here).

Owner string: ``<boot id>/<pid namespace>/<pid>/<start ticks>:<attempt token>``. Elsewhere than
Linux the process part is a random per-process value and only the expiry applies.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets

from apps.core.drivers.db import as_dt, now

LEASE_BASE = 120.0  # seconds every lease lasts at least
LEASE_RATE = 10 * 1024 * 1024  # bytes per second assumed for the rest (slow disks, S3)

_identity: tuple[int, str] = (0, "")


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _process(pid: int | str) -> tuple[str, str]:
    """``(<boot id>/<pid namespace>/<pid>/<start ticks>, state letter)`` of ``pid`` (``self``
    for this process). Raises ``OSError`` when ``/proc`` has no such process (or no ``/proc``)."""
    boot = _read("/proc/sys/kernel/random/boot_id").strip()
    namespace = os.readlink(f"/proc/{pid}/ns/pid")
    stat = _read(f"/proc/{pid}/stat")
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    real_pid = os.getpid() if pid == "self" else pid
    # Field 3 of stat is the state, field 22 the start time in clock ticks since boot.
    return f"{boot}/{namespace}/{real_pid}/{fields[19]}", fields[0]


def identity() -> str:
    """This process's part of an owner string (computed once per process, after any fork)."""
    global _identity
    pid = os.getpid()
    if _identity[0] != pid:
        try:
            _identity = (pid, _process("self")[0])
        except (OSError, IndexError):
            _identity = (pid, f"nonlinux-{secrets.token_hex(8)}/-/{pid}/-")
    return _identity[1]


def new_owner() -> str:
    """A fresh owner string for one attempt of this process."""
    return f"{identity()}:{secrets.token_hex(6)}"


def expiry(size: int) -> dt.datetime:
    """When a lease for writing ``size`` bytes lapses: :data:`LEASE_BASE` seconds plus the
    time to move ``size`` bytes at :data:`LEASE_RATE`."""
    return now() + dt.timedelta(seconds=LEASE_BASE + size / LEASE_RATE)


def owner_alive(owner: str) -> bool | None:
    """Whether the process of ``owner`` still runs: ``True``/``False`` when this process can
    tell (same boot and PID namespace on Linux), ``None`` when it cannot."""
    process = owner.rsplit(":", 1)[0]
    parts = process.split("/")
    mine = identity().split("/")
    if len(parts) != 4 or parts[:2] != mine[:2] or parts[0].startswith("nonlinux-"):
        return None
    if process == identity():
        return True
    try:
        found, state = _process(int(parts[2]))
    except (OSError, IndexError, ValueError):
        return False
    return found == process and state not in ("Z", "X")  # a zombie is dead, only not yet reaped


def held(row: dict) -> bool:
    """Whether ``row`` (a ``storage_file`` row) is leased to a writer that may still finish."""
    owner = row.get("lease_owner") or ""
    if not owner:
        return False
    expires = as_dt(row.get("lease_expires"))
    if expires is None or expires <= now():
        return False
    return owner_alive(owner) is not False
