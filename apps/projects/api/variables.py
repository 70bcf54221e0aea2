"""Project variables (``/v1/project/variables``, scopes ``project.read``/``project.write``) and
mock phone numbers (``/v1/project/mock-phones``, scopes ``mocks.read``/``mocks.write``).

Variable model (Appwrite's ``Variable``): ``$id``, ``$createdAt``, ``$updatedAt``, ``key``,
``description``, ``value`` (``""`` for a secret one), ``secret``, ``resourceType``
(``project``), ``resourceId`` (``""``). Errors: 404 ``variable_not_found``, 409
``variable_already_exists`` (same ID or same key), 400 ``variable_cannot_unset_secret``.

Mock number model: ``number``, ``otp``, ``$createdAt``, ``$updatedAt``; they are the project's
``auth_mock_numbers`` (also edited in the admin), at most :data:`MAX_MOCKS`. Errors: 404 ``mock_number_not_found``, 409 ``mock_number_already_exists``,
400 ``mock_number_limit_exceeded``.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.domain.ids import resolve_id
from apps.core.domain.timefmt import iso
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.projects.api.common import cols, drop_project_cache, field, orm, page, when

MAX_MOCKS = 5000  # Appwrite's APP_LIMIT_COUNT
COLUMNS = cols("v", {"key": ("key", "string"), "secret": ("secret", "boolean")})


def variable_model(row) -> dict:
    secret = bool(field(row, "secret"))
    return {"$id": field(row, "uid"), "$createdAt": when(field(row, "created_at")),
            "$updatedAt": when(field(row, "updated_at")), "key": field(row, "key"),
            "description": field(row, "description") or "", "value": "" if secret else field(row, "value"),
            "secret": secret, "resourceType": "project", "resourceId": ""}


def _get(project_pk: int, uid: str):
    from apps.projects.models import Variable

    found = Variable.objects.filter(project_id=project_pk, uid=uid).first()
    if found is None:
        raise AppwriteError("variable_not_found")
    return found


async def variables_list(ctx):
    total, rows = await page(ctx, table="projects_variable", alias="v", columns=COLUMNS)
    return json_response({"total": total, "variables": [variable_model(r) for r in rows]})


async def variable_get(ctx):
    return json_response(variable_model(await orm(ctx, _get, ctx.project["id"], ctx.params.variableId)))


async def variable_create(ctx):
    p = ctx.params
    uid = resolve_id(p.variableId, "variableId")

    def run():
        from apps.projects.models import Variable

        try:
            with transaction.atomic():
                return Variable.objects.create(project_id=ctx.project["id"], uid=uid, key=p.key, value=p.value,
                                               secret=p.secret, description=p.description)
        except IntegrityError:
            raise AppwriteError("variable_already_exists") from None

    return json_response(variable_model(await orm(ctx, run)), 201)


async def variable_update(ctx):
    p = ctx.params

    def run():
        variable = _get(ctx.project["id"], p.variableId)
        if p.secret is False and variable.secret:
            raise AppwriteError("variable_cannot_unset_secret")
        for name in ("key", "value", "secret", "description"):
            if getattr(p, name) is not None:
                setattr(variable, name, getattr(p, name))
        try:
            with transaction.atomic():
                variable.save()
        except IntegrityError:
            raise AppwriteError("variable_already_exists") from None
        return variable

    return json_response(variable_model(await orm(ctx, run)))


async def variable_delete(ctx):
    await orm(ctx, lambda: _get(ctx.project["id"], ctx.params.variableId).delete())
    return no_content()


# --- mock phone numbers -------------------------------------------------------------------------
def mock_model(entry: dict) -> dict:
    return {"number": entry["phone"], "otp": entry["otp"], "$createdAt": entry.get("createdAt", ""),
            "$updatedAt": entry.get("updatedAt", "")}


def _mocks(ctx, change=None):
    """The project's mock numbers; with ``change(list) -> result``, applied under a row lock."""
    from apps.projects.models import Project

    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=ctx.project["id"])
        entries = [dict(e) for e in project.auth_mock_numbers or []]
        if change is None:
            return entries
        result = change(entries)
        project.auth_mock_numbers = entries
        project.save(update_fields=["auth_mock_numbers", "updated_at"])
    drop_project_cache(ctx.project_id)
    return result


def _find(entries: list[dict], number: str) -> dict:
    for entry in entries:
        if entry.get("phone") == number:
            return entry
    raise AppwriteError("mock_number_not_found")


async def mocks_list(ctx):
    entries = await orm(ctx, _mocks, ctx)
    return json_response({"total": len(entries) if ctx.params.total else 0,
                          "mockNumbers": [mock_model(e) for e in entries]})


async def mock_get(ctx):
    entries = await orm(ctx, _mocks, ctx)
    return json_response(mock_model(_find(entries, ctx.params.number)))


async def mock_create(ctx):
    p = ctx.params
    now = iso(timezone.now())

    def change(entries):
        if any(e.get("phone") == p.number for e in entries):
            raise AppwriteError("mock_number_already_exists")
        if len(entries) >= MAX_MOCKS:
            raise AppwriteError("mock_number_limit_exceeded")
        entry = {"phone": p.number, "otp": p.otp, "createdAt": now, "updatedAt": now}
        entries.append(entry)
        return entry

    return json_response(mock_model(await orm(ctx, _mocks, ctx, change)), 201)


async def mock_update(ctx):
    p = ctx.params

    def change(entries):
        entry = _find(entries, p.number)
        entry.update(otp=p.otp, updatedAt=iso(timezone.now()))
        return entry

    return json_response(mock_model(await orm(ctx, _mocks, ctx, change)))


async def mock_delete(ctx):
    def change(entries):
        entries.remove(_find(entries, ctx.params.number))

    await orm(ctx, _mocks, ctx, change)
    return no_content()
