"""PostgreSQL extensions some database features need: ``pg_trgm`` (trigram indexes) and
``postgis`` (spatial columns). Each is created on first use (``CREATE EXTENSION IF NOT
EXISTS``), not by a migration, so a server whose database lacks one still starts and serves
everything else; the feature then answers 400 ``general_feature_unsupported`` saying why.
"""

from __future__ import annotations

import logging

from apps.core.drivers.db import UniqueViolation
from apps.core.errors import AppwriteError

log = logging.getLogger("apps.databases")
_present: set[str] = set()


async def available(db, name: str) -> bool:
    """True when extension ``name`` is installed in the database or could be (its files are on
    the server). Cached once present."""
    if name in _present:
        return True
    row = await db.fetchone("SELECT (SELECT 1 FROM pg_extension WHERE extname = %s) AS installed, "
                            "(SELECT 1 FROM pg_available_extensions WHERE name = %s) AS available", (name, name))
    if row and row["installed"]:
        _present.add(name)
    return bool(row and (row["installed"] or row["available"]))


async def ensure(db, name: str, feature: str) -> None:
    """Create extension ``name`` if missing. Raises 400 ``general_feature_unsupported`` naming
    ``feature`` when the database server does not have it or refuses to create it."""
    if name in _present:
        return
    if not await available(db, name):
        raise AppwriteError("general_feature_unsupported",
                            f"{feature} need the PostgreSQL extension {name}, which this database server does not "
                            "have installed.")
    if name in _present:
        return
    try:
        await db.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")
    except UniqueViolation:  # another process created it at the same moment
        pass
    except Exception as exc:
        log.warning("CREATE EXTENSION %s failed: %s", name, exc)
        raise AppwriteError("general_feature_unsupported",
                            f"{feature} need the PostgreSQL extension {name}, which this server's database user may "
                            "not create (ask the database administrator to run CREATE EXTENSION "
                            f"{name}).") from None
    _present.add(name)
