"""The admin's writes as API calls: an operator's action runs the ``/v1`` endpoint's own
parameter model and handler, in this process, as an API key of the project.

So an admin form is held to exactly what ``POST /v1/users``, ``PATCH /v1/users/{userId}/password``,
``POST /v1/teams/{teamId}/memberships`` or ``POST /v1/storage/buckets/{bucketId}/files`` accept
(types, sizes, password policy, unique emails, bucket limits...), answers with the same errors, and
its writes announce the same events and audit entries (the key is named ``admin: <staff user>``).
Skipped, as for a trusted caller: the origin check and the rate limits.
"""

from __future__ import annotations

from typing import Any

import orjson

from apps.core.drivers.db import get_database, refused_value
from apps.core.drivers.kv import get_kv
from apps.core.drivers.runtime import run_sync
from apps.core.errors import AppwriteError
from apps.core.http.auth import KEY_SCOPES, Auth
from apps.core.http.context import RequestContext
from apps.core.http.params import validate
from apps.core.http.routes import v1_router


def call(project_uid: str, operator: str, method: str, path: str, params: dict[str, Any] | None = None) -> dict:
    """Run ``method path`` (a ``/v1`` route without the ``/v1``, e.g. ``/users``) with
    ``params`` (as the JSON body or multipart fields would carry them; a file is an
    ``UploadedPart``) for project ``project_uid``; returns the answer's JSON (``{}`` for 204).
    Raises :class:`AppwriteError` as the API would answer it (404 ``project_not_found`` too)."""
    from apps.projects.selectors import project_resolve

    ctx = RequestContext(mode="sync", method=method, path=path, query=[], headers={}, peer_ip="127.0.0.1",
                         db=get_database("sync"), kv=get_kv("sync"))
    endpoint, path_params = v1_router().match(method, path)
    ctx.endpoint, ctx.path_params = endpoint, path_params
    ctx.project = run_sync(project_resolve(ctx, project_uid))
    if ctx.project is None:
        raise AppwriteError("project_not_found")
    ctx.auth = Auth(kind="key", key={"name": f"admin: {operator}"}, scopes=KEY_SCOPES, roles=[])
    raw = {**(params or {}), **path_params}
    ctx.raw_params = raw
    if endpoint.input is not None:
        ctx.params = validate(endpoint.input, raw)
    try:
        response = run_sync(endpoint.handler(ctx))
    except AppwriteError:
        raise
    except Exception as exc:  # a value PostgreSQL refused through the ORM: the API's 400, as the pipeline answers it
        refused = refused_value(exc)
        if refused is None:
            raise
        raise refused from None
    return orjson.loads(response.body) if response.body else {}
