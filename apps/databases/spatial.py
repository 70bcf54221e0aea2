"""Spatial columns and queries (point, line, polygon).

Not implemented yet: spatial queries on other attributes are refused like Appwrite refuses them.
"""

from __future__ import annotations

from apps.core.errors import AppwriteError


def compile_filter(db, f, q) -> tuple[str, list]:
    """Raises 400 ``general_query_invalid``: the attribute is not spatial."""
    raise AppwriteError("general_query_invalid",
                        f'Invalid query: Spatial query "{q.method}" cannot be applied on non-spatial attribute: '
                        f'{q.attribute}')
