"""The Webhooks service: ``/v1/webhooks`` (Appwrite 1.9, scopes ``webhooks.read``/``webhooks.write``).

Model (Appwrite's ``Webhook``): ``$id``, ``$createdAt``, ``$updatedAt``, ``name``,
``description``, ``url``, ``events``, ``tls``, ``authUsername``, ``authPassword``, ``secret``
(the signature key), ``enabled``, ``logs`` (the last failure), ``attempts`` (failures in a row).
Errors: 404 ``webhook_not_found``, 409 ``webhook_already_exists``, 400
``general_argument_invalid`` (bad URL, event, secret shorter than 8 characters).
"""

from __future__ import annotations

import secrets

from django.db import IntegrityError, transaction

from apps.core.domain.ids import resolve_id
from apps.core.drivers.cache import invalidate
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.projects.api.common import cols, field, json_field, orm, page, when
from apps.webhooks.dispatch import webhooks_tag

COLUMNS = cols("w", {"name": ("name", "string"), "url": ("url", "string"), "enabled": ("enabled", "boolean"),
                     "tls": ("tls", "boolean"), "authUsername": ("auth_username", "string"),
                     "attempts": ("attempts", "integer"), "description": ("description", "string")})


def webhook_model(row) -> dict:
    return {
        "$id": field(row, "uid"), "$createdAt": when(field(row, "created_at")),
        "$updatedAt": when(field(row, "updated_at")), "name": field(row, "name"),
        "description": field(row, "description") or "", "url": field(row, "url"),
        "events": json_field(row, "events", []), "tls": bool(field(row, "tls")),
        "authUsername": field(row, "auth_username") or "", "authPassword": field(row, "auth_password") or "",
        "secret": field(row, "signature_key"), "enabled": bool(field(row, "enabled")),
        "logs": field(row, "logs") or "", "attempts": field(row, "attempts") or 0,
    }


def new_secret() -> str:
    """A signature key as Appwrite makes one: 64 random bytes in hex."""
    return secrets.token_hex(64)


def _get(project_pk: int, uid: str):
    from apps.webhooks.models import Webhook

    hook = Webhook.objects.filter(project_id=project_pk, uid=uid).first()
    if hook is None:
        raise AppwriteError("webhook_not_found")
    return hook


async def _changed(ctx) -> None:
    await invalidate(ctx, webhooks_tag(ctx.project["id"]))


async def webhooks_list(ctx):
    total, rows = await page(ctx, table="webhooks_webhook", alias="w", columns=COLUMNS)
    return json_response({"total": total, "webhooks": [webhook_model(r) for r in rows]})


async def webhook_create(ctx):
    p = ctx.params

    def create():
        from apps.webhooks.models import Webhook

        try:
            with transaction.atomic():
                return Webhook.objects.create(
                    project_id=ctx.project["id"], uid=resolve_id(p.webhookId, "webhookId"), name=p.name, url=p.url,
                    events=list(dict.fromkeys(p.events)), enabled=p.enabled, tls=p.tls,
                    auth_username=p.authUsername, auth_password=p.authPassword, description=p.description,
                    signature_key=p.secret or new_secret())
        except IntegrityError:
            raise AppwriteError("webhook_already_exists") from None

    hook = await orm(ctx, create)
    await _changed(ctx)
    return json_response(webhook_model(hook), 201)


async def webhook_get(ctx):
    return json_response(webhook_model(await orm(ctx, _get, ctx.project["id"], ctx.params.webhookId)))


async def webhook_update(ctx):
    p = ctx.params

    def update():
        hook = _get(ctx.project["id"], p.webhookId)
        hook.name, hook.url, hook.events, hook.enabled, hook.tls = (
            p.name, p.url, list(dict.fromkeys(p.events)), p.enabled, p.tls)
        hook.auth_username, hook.auth_password, hook.description = p.authUsername, p.authPassword, p.description
        if p.enabled:
            hook.attempts = 0  # re-enabling a webhook the worker disabled starts its count again
        hook.save()
        return hook

    hook = await orm(ctx, update)
    await _changed(ctx)
    return json_response(webhook_model(hook))


async def webhook_update_secret(ctx):
    p = ctx.params

    def update():
        hook = _get(ctx.project["id"], p.webhookId)
        hook.signature_key = p.secret or new_secret()
        hook.save(update_fields=["signature_key", "updated_at"])
        return hook

    return json_response(webhook_model(await orm(ctx, update)))


async def webhook_delete(ctx):
    def delete():
        # The row lock first: a delivery the worker logs meanwhile waits for the delete (its
        # foreign key check), then fails, instead of landing between the delete's two statements.
        from apps.webhooks.models import Webhook

        with transaction.atomic():
            hook = _get(ctx.project["id"], ctx.params.webhookId)
            Webhook.objects.select_for_update().filter(pk=hook.pk).first()
            hook.delete()

    await orm(ctx, delete)
    await _changed(ctx)
    return no_content()
