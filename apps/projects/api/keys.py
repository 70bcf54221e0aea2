"""API keys of the caller's project: ``/v1/project/keys`` (scopes ``keys.read``/``keys.write``).

Model (Appwrite's ``Key``): ``$id``, ``$createdAt``, ``$updatedAt``, ``name``, ``description``,
``expire`` (``""`` = never), ``scopes``, ``secret``, ``accessedAt``, ``sdks``. Only a hash of a
secret is stored, so ``secret`` is shown once, when the key is made, and ``""`` afterwards.

Appwrite 1.9 refuses ``POST /project/keys`` to a caller authorized by an API key (403
``key_creation_denied``); a server makes a short-lived key with ``POST /project/keys/ephemeral``
instead (at most 3600 s, and, a rule of this server, only scopes the calling key holds, so a key
cannot mint a stronger one). Standard keys are made by ``manage.py createapikey`` or the admin.
"""

from __future__ import annotations

import datetime as dt
import secrets

from django.utils import timezone

from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content
from apps.projects.api.common import cols, field, json_field, orm, page, when

COLUMNS = cols("k", {"name": ("name", "string"), "expire": ("expire", "datetime"),
                     "accessedAt": ("accessed_at", "datetime"), "scopes": ("scopes", "array")})


def key_model(row, secret: str = "") -> dict:
    return {
        "$id": field(row, "uid"), "$createdAt": when(field(row, "created_at")),
        "$updatedAt": when(field(row, "updated_at")), "name": field(row, "name"),
        "description": field(row, "description") or "", "expire": when(field(row, "expire")),
        "scopes": json_field(row, "scopes", []), "secret": secret,
        "accessedAt": when(field(row, "accessed_at")), "sdks": [],
    }


def _get(project_pk: int, uid: str):
    from apps.projects.models import ApiKey

    key = ApiKey.objects.filter(project_id=project_pk, uid=uid, ephemeral=False).first()
    if key is None:
        raise AppwriteError("key_not_found")
    return key


async def keys_list(ctx):
    total, rows = await page(ctx, table="projects_apikey", alias="k", columns=COLUMNS, where=["k.ephemeral = %s"],
                             params=[False])
    return json_response({"total": total, "keys": [key_model(r) for r in rows]})


async def key_get(ctx):
    return json_response(key_model(await orm(ctx, _get, ctx.project["id"], ctx.params.keyId)))


async def key_create(ctx):
    """Appwrite 1.9: a key cannot make a standard key (403 ``key_creation_denied``)."""
    raise AppwriteError("key_creation_denied")


async def key_update(ctx):
    p = ctx.params

    def update():
        key = _get(ctx.project["id"], p.keyId)
        key.name, key.scopes, key.expire = p.name, sorted(set(p.scopes)), p.expire
        if p.description is not None:
            key.description = p.description
        key.save()
        return key

    return json_response(key_model(await orm(ctx, update)))


async def key_delete(ctx):
    await orm(ctx, lambda: _get(ctx.project["id"], ctx.params.keyId).delete())
    return no_content()


async def ephemeral_key_create(ctx):
    p = ctx.params
    held = set(ctx.auth.scopes)
    missing = sorted(set(p.scopes) - held)
    if missing:
        raise invalid_argument("scopes", f"The calling key does not hold the scope(s) {', '.join(missing)}.")

    def create():
        from apps.core.domain.ids import unique_id
        from apps.projects.models import ApiKey
        from apps.projects.services import hash_secret

        secret = "ephemeral_" + secrets.token_hex(64)
        key = ApiKey.objects.create(
            project_id=ctx.project["id"], uid=unique_id(), name="Ephemeral key", scopes=sorted(set(p.scopes)),
            secret_hash=hash_secret(secret), expire=timezone.now() + dt.timedelta(seconds=p.duration), ephemeral=True)
        return key, secret

    key, secret = await orm(ctx, create)
    return json_response(key_model(key, secret), 201)
