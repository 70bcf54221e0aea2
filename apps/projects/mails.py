"""The account mails of a project: through its own SMTP server and with its own templates.

The account flows (verification, recovery, magic URL, email and MFA codes, team invitations)
queue :data:`send_project_mail` (queue ``mails``). The worker reads the project when it sends:

* **SMTP**: when the project's custom SMTP is on (``smtp_enabled``) with a host and a port, the
  mail goes through that server (:func:`apps.projects.smtp.project_connection`: username,
  password, ``secure``) from the project's sender, with its reply-to; an empty sender name or
  email is the server's ``MAIL_SENDER_*``. Otherwise the server's own mailer and sender.
* **Templates**: only with the project's SMTP on (Appwrite's rule: the server's own mail server
  sends the built-in text only), the project's template of that type (:data:`TEMPLATES`) in the
  request's locale (``X-Appwrite-Locale`` lower-cased, ``en`` without one; no fallback to
  another locale, as Appwrite) replaces the built-in subject and/or HTML message, and its sender
  and reply-to fields override the SMTP settings'. ``{{name}}`` placeholders take Appwrite's
  variables (:func:`template_variables`); in the message they are HTML-escaped. The plain-text
  part of a custom message is its HTML without tags (a link written ``text (url)``).
"""

from __future__ import annotations

import html
import re
from typing import Any

from django.tasks import task

# Appwrite's email template IDs -> this server's mail names (apps/accounts/templates/mail/<lang>/);
# "" = a mail this server never sends.
TEMPLATES = {"verification": "verification", "magicSession": "magic-url", "recovery": "recovery",
             "invitation": "invitation", "mfaChallenge": "mfa-challenge", "otpSession": "email-code",
             "sessionAlert": "", "otpVerification": "", "otpRecovery": ""}
TEMPLATE_OF = {name: template_id for template_id, name in TEMPLATES.items() if name}
_RTL = frozenset({"ar", "fa", "he", "ur", "ps", "sd", "ug", "yi", "ckb", "dv"})
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z]+)\s*\}\}")
_LINK = re.compile(r"<a\s[^>]*?href\s*=\s*[\"']([^\"']*)[\"'][^>]*>(.*?)</a>", re.IGNORECASE | re.DOTALL)


def template_locale(locale: str) -> str:
    """The template locale a request's ``X-Appwrite-Locale`` selects (``en`` without one)."""
    return (locale or "").strip().lower()[:16] or "en"


def template_variables(context: dict[str, Any], locale: str) -> dict[str, str]:
    """Appwrite's template variables from a mail's context: ``user``, ``project``,
    ``redirect`` (the link), ``team``, ``owner`` (who invites), ``otp``, ``phrase``,
    ``direction`` (``ltr``/``rtl``) and ``agentDevice``/``agentClient``/``agentOs`` (from the
    requesting client's user agent, ``UNKNOWN`` when not recognised)."""
    from apps.audit.clients import describe

    client = describe(context.get("agent", "")) if context.get("agent") else {}
    return {
        "user": context.get("user", ""), "project": context.get("project", ""), "redirect": context.get("url", ""),
        "team": context.get("team", ""), "owner": context.get("inviter", ""), "otp": context.get("otp", ""),
        "phrase": context.get("phrase", ""),
        "direction": "rtl" if template_locale(locale).split("-", 1)[0] in _RTL else "ltr",
        "agentDevice": client.get("deviceBrand") or "UNKNOWN", "agentClient": client.get("clientName") or "UNKNOWN",
        "agentOs": client.get("osName") or "UNKNOWN",
    }


def fill(text: str, variables: dict[str, str], *, escape: bool) -> str:
    """``text`` with each ``{{name}}`` of ``variables`` replaced (HTML-escaped when ``escape``);
    unknown placeholders stay as written."""
    def one(found: re.Match) -> str:
        value = variables.get(found.group(1))
        if value is None:
            return found.group(0)
        return html.escape(str(value)) if escape else str(value)

    return _PLACEHOLDER.sub(one, text)


def text_of_html(markup: str) -> str:
    """A plain-text version of an HTML message: links as ``text (url)``, tags removed."""
    from django.utils.html import strip_tags

    linked = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(1) not in m.group(2) else m.group(2),
                       markup)
    lines = (" ".join(line.split()) for line in html.unescape(strip_tags(linked)).splitlines())
    return "\n".join(line for line in lines if line).strip() + "\n"


def render_custom(name: str, *, locale: str, context: dict[str, Any], template) -> tuple[str, str, str] | None:
    """``(subject, text, html)`` of mail ``name`` with the project's ``template`` (a
    :class:`apps.projects.models.MailTemplate` or ``None``) over the built-in text; ``None``
    when the template changes neither subject nor message."""
    from apps.core.domain.mail import render_mail

    if template is None or not (template.subject or template.message):
        return None
    subject, text, body = render_mail(name, locale=locale, context=context)
    variables = template_variables(context, locale)
    if template.subject:
        subject = " ".join(fill(template.subject, variables, escape=False).split())
    if template.message:
        body = fill(template.message, variables, escape=True)
        text = text_of_html(body)
    return subject, text, body


def smtp_ready(project) -> bool:
    """True when the project's own SMTP server sends its mail: on, with a host and a port."""
    return bool(project.smtp_enabled and project.smtp_host and project.smtp_port)


@task(queue_name="mails", priority=10)
def send_project_mail(*, project_pk: int, name: str, recipient: str, locale: str = "", context: dict[str, Any],
                      recipient_name: str = "") -> None:
    """Send account mail ``name`` of project ``project_pk`` to ``recipient`` (see the module
    docstring). Errors propagate, so the worker retries."""
    from django.conf import settings

    from apps.core.domain.mail import compose_mail
    from apps.projects.models import MailTemplate, Project
    from apps.projects.smtp import project_connection

    project = Project.objects.filter(pk=project_pk).first()
    if project is None or not smtp_ready(project):
        compose_mail(name, recipient=recipient, locale=locale, context=context, recipient_name=recipient_name).send()
        return
    template = None
    if name in TEMPLATE_OF:
        template = MailTemplate.objects.filter(project=project, template_id=TEMPLATE_OF[name],
                                               locale=template_locale(locale)).first()

    def pick(field: str, default: str) -> str:
        return (getattr(template, field, "") if template is not None else "") or default

    sender = (pick("sender_name", project.smtp_sender_name or settings.MAIL_SENDER_NAME),
              pick("sender_email", project.smtp_sender_email or settings.MAIL_SENDER_EMAIL))
    reply_to = (pick("reply_to_name", project.smtp_reply_to_name), pick("reply_to_email", project.smtp_reply_to_email))
    compose_mail(name, recipient=recipient, locale=locale, context=context, recipient_name=recipient_name,
                 rendered=render_custom(name, locale=locale, context=context, template=template),
                 sender=sender, reply_to=reply_to, connection=project_connection(project)).send()
