"""Platforms of the caller's project: ``/v1/project/platforms`` (scopes ``platforms.read``/
``platforms.write``).

Models (Appwrite's ``Platform<Type>``): ``$id``, ``$createdAt``, ``$updatedAt``, ``name``,
``type`` and one identifier: ``hostname`` (web), ``applicationId`` + ``fingerprints``
(android), ``bundleIdentifier`` (apple), ``packageName`` (linux), ``packageIdentifierName``
(windows). A web platform allows browser requests from its host name under any scheme and
port (:func:`apps.projects.selectors.origin_allowed`); web platforms made before the Project
service hold a full origin and show its host name. Errors: 404 ``platform_not_found``, 409
``platform_already_exists``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import IntegrityError, transaction

from apps.core.domain.ids import resolve_id
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.projects.api.common import cols, field, json_field, orm, page, when

# type -> the model's identifier field
IDENTIFIERS = {"web": "hostname", "android": "applicationId", "apple": "bundleIdentifier", "linux": "packageName",
               "windows": "packageIdentifierName"}
COLUMNS = cols("pl", {"name": ("name", "string"), "type": ("type", "string"), "hostname": ("hostname", "string")})


def _web_host(row) -> str:
    hostname = field(row, "hostname") or ""
    if hostname:
        return hostname
    origin = field(row, "origin") or ""
    if origin == "*":
        return "*"
    try:
        return urlsplit(origin).hostname or origin
    except ValueError:
        return origin


def platform_model(row) -> dict:
    kind = field(row, "type") or "web"
    out = {"$id": field(row, "uid"), "$createdAt": when(field(row, "created_at")),
           "$updatedAt": when(field(row, "updated_at")), "name": field(row, "name") or "", "type": kind}
    if kind == "web":
        out["hostname"] = _web_host(row)
    else:
        out[IDENTIFIERS[kind]] = field(row, "key") or ""
    if kind == "android":
        out["fingerprints"] = json_field(row, "fingerprints", [])
    return out


def _get(project_pk: int, uid: str):
    from apps.projects.models import Platform

    found = Platform.objects.filter(project_id=project_pk, uid=uid).first()
    if found is None:
        raise AppwriteError("platform_not_found")
    return found


def _values(kind: str, p) -> dict:
    if kind == "web":
        return {"hostname": p.hostname, "origin": ""}
    values = {"key": getattr(p, IDENTIFIERS[kind])}
    if kind == "android":
        values["fingerprints"] = list(p.fingerprints)
    return values


async def platforms_list(ctx):
    total, rows = await page(ctx, table="projects_platform", alias="pl", columns=COLUMNS)
    return json_response({"total": total, "platforms": [platform_model(r) for r in rows]})


async def platform_get(ctx):
    return json_response(platform_model(await orm(ctx, _get, ctx.project["id"], ctx.params.platformId)))


async def platform_delete(ctx):
    await orm(ctx, lambda: _get(ctx.project["id"], ctx.params.platformId).delete())
    return no_content()


def creator(kind: str):
    """The create handler of platforms of ``kind``."""
    async def create(ctx):
        p = ctx.params
        uid = resolve_id(p.platformId, "platformId")

        def run():
            from apps.projects.models import Platform

            try:
                with transaction.atomic():
                    return Platform.objects.create(project_id=ctx.project["id"], uid=uid, name=p.name, type=kind,
                                                   **_values(kind, p))
            except IntegrityError:
                raise AppwriteError("platform_already_exists") from None

        return json_response(platform_model(await orm(ctx, run)), 201)

    create.__name__ = f"platform_create_{kind}"
    return create


def updater(kind: str):
    """The update handler of platforms of ``kind`` (404 for a platform of another type)."""
    async def update(ctx):
        p = ctx.params

        def run():
            platform = _get(ctx.project["id"], p.platformId)
            if platform.type != kind:
                raise AppwriteError("platform_not_found")
            platform.name = p.name
            for name, value in _values(kind, p).items():
                setattr(platform, name, value)
            platform.save()
            return platform

        return json_response(platform_model(await orm(ctx, run)))

    update.__name__ = f"platform_update_{kind}"
    return update
