"""The caller's project: ``GET /v1/project``, labels, sign-in methods, service and protocol
switches, SMTP and mail templates.

Project model (Appwrite's ``Project``, the fields this server has): ``$id``, ``$createdAt``,
``$updatedAt``, ``name``, ``labels``, ``authMethods`` (``[{$id, enabled}]``), ``services`` and
``protocols`` (every one this server serves, with its switch: ``services_disabled`` /
``protocols_disabled``, enforced by ``apps.core.http.pipeline``), the ``smtp*`` settings (the password is
never shown: ``""``), and constants for what a self-hosted server without a console has
(``teamId`` ``""``, ``region`` ``default``, ``status`` ``active``, ``pingCount`` 0...).

SMTP: a project may send its mail through its own server (Appwrite's custom SMTP); ``POST
/project/smtp/tests`` queues a test mail per address through it (queue ``mails``), 400
``general_argument_invalid`` when SMTP is off or lacks host, port or sender. Mail templates are
stored per (template, locale); one never edited reads as the server's built-in text. The account
mails use both (``apps.projects.mails``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from apps.core.domain.timefmt import iso
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content
from apps.projects.api.common import drop_project_cache, orm
from apps.projects.mails import TEMPLATES  # Appwrite's template IDs -> this server's mail names

AUTH_METHODS = {"email-password": "auth_email_password", "magic-url": "auth_magic_url",
                "email-otp": "auth_email_otp", "anonymous": "auth_anonymous", "invites": "auth_invites",
                "jwt": "auth_jwt", "phone": "auth_phone"}
UNSUPPORTED_METHODS = ("passkey",)
# What the Project service can switch off (Appwrite's IDs of the services and protocols this server serves)
SERVICES = ("account", "avatars", "databases", "tablesdb", "locale", "health", "project", "storage", "teams",
            "users", "functions", "graphql", "messaging")
PROTOCOLS = ("rest", "graphql", "websocket")


def project_model(p) -> dict:
    return {
        "$id": p.uid, "$createdAt": iso(p.created_at), "$updatedAt": iso(p.updated_at), "name": p.name,
        "teamId": "", "region": "default", "labels": list(p.labels or []), "status": "active", "onboarding": {},
        "smtpEnabled": p.smtp_enabled, "smtpSenderName": p.smtp_sender_name, "smtpSenderEmail": p.smtp_sender_email,
        "smtpReplyToName": p.smtp_reply_to_name, "smtpReplyToEmail": p.smtp_reply_to_email,
        "smtpHost": p.smtp_host, "smtpPort": p.smtp_port or 0, "smtpUsername": p.smtp_username, "smtpPassword": "",
        "smtpSecure": p.smtp_secure, "pingCount": 0, "pingedAt": "", "consoleAccessedAt": "", "blocks": [],
        "authMethods": [*({"$id": m, "enabled": bool(getattr(p, f))} for m, f in AUTH_METHODS.items()),
                        *({"$id": m, "enabled": False} for m in UNSUPPORTED_METHODS)],
        "services": [{"$id": s, "enabled": s not in (p.services_disabled or ())} for s in SERVICES],
        "protocols": [{"$id": s, "enabled": s not in (p.protocols_disabled or ())} for s in PROTOCOLS],
    }


def load(ctx):
    from apps.projects.models import Project

    return Project.objects.get(pk=ctx.project["id"])


def save(ctx, changes: dict):
    """Set ``changes`` (model fields) on the caller's project; returns it."""
    from apps.projects.models import Project

    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=ctx.project["id"])
        for name, value in changes.items():
            setattr(project, name, value)
        project.save(update_fields=[*changes, "updated_at"])
    drop_project_cache(ctx.project_id)
    return project


async def project_get(ctx):
    return json_response(project_model(await orm(ctx, load, ctx)))


async def project_delete(ctx):
    """``DELETE /project``: delete the caller's project and everything in it, as the admin does
    (:func:`apps.projects.services.projects_delete`, one transaction); its keys stop working at once."""
    from apps.projects.services import projects_delete

    await orm(ctx, projects_delete, [ctx.project["id"]])
    drop_project_cache(ctx.project_id)
    return no_content()


async def labels_update(ctx):
    labels = list(dict.fromkeys(ctx.params.labels))
    return json_response(project_model(await orm(ctx, save, ctx, {"labels": labels})))


async def auth_method_update(ctx):
    p = ctx.params
    if p.methodId in UNSUPPORTED_METHODS:
        if p.enabled:
            raise AppwriteError("general_feature_unsupported", f"The sign-in method {p.methodId} is not supported.")
        return json_response(project_model(await orm(ctx, load, ctx)))
    column = AUTH_METHODS.get(p.methodId)
    if column is None:
        raise invalid_argument("methodId", f"Value must be one of ({', '.join([*AUTH_METHODS, *UNSUPPORTED_METHODS])})")
    return json_response(project_model(await orm(ctx, save, ctx, {column: p.enabled})))


def _switch(ctx, column: str, allowed: tuple[str, ...], name: str, value: str, enabled: bool):
    """Turn ``value`` (one of ``allowed``) on or off in the project's ``column`` list."""
    if value not in allowed:
        raise invalid_argument(name, f"Value must be one of ({', '.join(allowed)})")

    def run():
        from apps.projects.models import Project

        with transaction.atomic():
            project = Project.objects.select_for_update().get(pk=ctx.project["id"])
            off = [s for s in getattr(project, column) or [] if s != value]
            setattr(project, column, off if enabled else [*off, value])
            project.save(update_fields=[column, "updated_at"])
        drop_project_cache(ctx.project_id)
        return project

    return run


async def service_update(ctx):
    p = ctx.params
    return json_response(project_model(await orm(ctx, _switch(ctx, "services_disabled", SERVICES, "serviceId",
                                                              p.serviceId, p.enabled))))


async def protocol_update(ctx):
    p = ctx.params
    return json_response(project_model(await orm(ctx, _switch(ctx, "protocols_disabled", PROTOCOLS, "protocolId",
                                                              p.protocolId, p.enabled))))


# --- SMTP ---------------------------------------------------------------------------------------
_SMTP_FIELDS = {"host": "smtp_host", "port": "smtp_port", "username": "smtp_username",
                "senderEmail": "smtp_sender_email", "senderName": "smtp_sender_name",
                "replyToEmail": "smtp_reply_to_email", "replyToName": "smtp_reply_to_name", "secure": "smtp_secure",
                "enabled": "smtp_enabled"}


async def smtp_update(ctx):
    p = ctx.params
    if p.secure not in (None, "", "tls", "ssl"):
        raise invalid_argument("secure", "Value must be one of (tls, ssl)")
    changes = {column: getattr(p, name) for name, column in _SMTP_FIELDS.items() if getattr(p, name) is not None}
    if p.password is not None:
        from apps.accounts.oauth2.crypto import encrypt

        changes["smtp_password"] = encrypt(p.password)
    return json_response(project_model(await orm(ctx, save, ctx, changes)))


async def smtp_test(ctx):
    from apps.core.tasks.queue import enqueue
    from apps.projects.smtp import send_smtp_test

    project = await orm(ctx, load, ctx)
    if not project.smtp_enabled:
        raise AppwriteError("general_argument_invalid", "SMTP must be enabled on the project to send a test email.")
    for value, what in ((project.smtp_sender_email, "sender email"), (project.smtp_host, "host"),
                        (project.smtp_port, "port")):
        if not value:
            raise AppwriteError("general_argument_invalid",
                                f"SMTP {what} must be configured on the project to send a test email.")
    for email in dict.fromkeys(ctx.params.emails):
        await enqueue(ctx.db, send_smtp_test, project_pk=project.pk, recipient=email)
    return no_content()


# --- mail templates ------------------------------------------------------------------------------
def _check_template(template_id: str) -> str:
    if template_id not in TEMPLATES:
        raise invalid_argument("templateId", f"Value must be one of ({', '.join(TEMPLATES)})")
    return template_id


def _builtin(template_id: str, locale: str) -> dict:
    """The server's own subject and HTML of a template in ``locale`` (its language fallback)."""
    from django.template.loader import get_template

    from apps.core.domain.mail import mail_language

    name = TEMPLATES[template_id]
    if not name:
        return {"subject": "", "message": ""}
    lang = mail_language(name, locale)
    subject: Any = get_template(f"mail/{lang}/{name}.subject.txt")  # a django.template.backends template
    message: Any = get_template(f"mail/{lang}/{name}.html")
    return {"subject": subject.template.source.strip(), "message": message.template.source}


def template_model(template_id: str, locale: str, row=None) -> dict:
    builtin = _builtin(template_id, locale)
    def pick(name: str, default: str = "") -> str:
        value = getattr(row, name, "") if row is not None else ""
        return value or default
    return {"templateId": template_id, "locale": locale, "subject": pick("subject", builtin["subject"]),
            "message": pick("message", builtin["message"]),
            "senderName": pick("sender_name", settings.MAIL_SENDER_NAME),
            "senderEmail": pick("sender_email", settings.MAIL_SENDER_EMAIL),
            "replyToEmail": pick("reply_to_email"), "replyToName": pick("reply_to_name")}


async def templates_list(ctx):
    def rows():
        from apps.projects.models import MailTemplate

        return list(MailTemplate.objects.filter(project_id=ctx.project["id"]).order_by("template_id", "locale"))

    found = await orm(ctx, rows)
    return json_response({"total": len(found) if ctx.params.total else 0,
                          "templates": [template_model(r.template_id, r.locale, r) for r in found]})


async def template_get(ctx):
    p = ctx.params
    _check_template(p.templateId)

    def row():
        from apps.projects.models import MailTemplate

        return MailTemplate.objects.filter(project_id=ctx.project["id"], template_id=p.templateId,
                                           locale=p.locale.lower()).first()

    return json_response(template_model(p.templateId, p.locale.lower(), await orm(ctx, row)))


async def template_update(ctx):
    p = ctx.params
    _check_template(p.templateId)
    fields = {"subject": "subject", "message": "message", "senderName": "sender_name",
              "senderEmail": "sender_email", "replyToEmail": "reply_to_email", "replyToName": "reply_to_name"}

    def run():
        from apps.projects.models import MailTemplate

        with transaction.atomic():  # a value PostgreSQL refuses leaves no new empty row behind
            row, _ = MailTemplate.objects.get_or_create(project_id=ctx.project["id"], template_id=p.templateId,
                                                        locale=p.locale.lower())
            for name, column in fields.items():
                if getattr(p, name) is not None:
                    setattr(row, column, getattr(p, name))
            row.save()
        return row

    return json_response(template_model(p.templateId, p.locale.lower(), await orm(ctx, run)))
