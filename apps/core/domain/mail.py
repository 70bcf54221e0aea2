"""Outgoing mail: templates per language, Django's mail framework, and the task that sends.

A mail is a set of Django templates found through the apps' ``templates/`` folders:
``mail/<lang>/<name>.subject.txt`` (one line), ``mail/<lang>/<name>.txt`` (plain text) and
``mail/<lang>/<name>.html`` (HTML, auto-escaped; extends ``mail/base.html``). The language is
the request's ``X-Appwrite-Locale`` (Appwrite's locale codes, e.g. ``de`` or ``pt-br``), tried
whole, then its language part, then English (:func:`mail_language`).

Requests never talk to the mail server: they enqueue :data:`send_templated_mail` (queue
``mails``) with :func:`enqueue_mail`; the worker renders and sends it through Django's default
mailer (``MAILERS``: SMTP from the ``SMTP_*`` settings, or :class:`LogBackend` in development
when no ``SMTP_HOST`` is set). :func:`compose_mail` builds the message for other senders too:
the account mails go through ``apps.projects.mails``, which passes a project's own SMTP
connection, sender and template text when the project has them.
"""

from __future__ import annotations

import logging
from email.utils import formataddr
from functools import cache
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.backends.base import BaseEmailBackend
from django.tasks import task
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from apps.core.drivers.db import Database
from apps.core.errors import AppwriteError

log = logging.getLogger("apps.mail")

DEFAULT_LANGUAGE = "en"


@cache
def locale_identifiers() -> tuple[str, ...]:
    """The Babel identifiers of Appwrite's locale codes, sorted: the CLDR locales made of an
    ISO 639-1 language and optionally a country (``en``, ``en_US``, ``pt_BR``). The Locale
    service lists them (``GET /v1/locale/codes``); a mail template's ``locale`` must be one."""
    from babel.localedata import locale_identifiers as cldr

    out = []
    for ident in cldr():
        parts = ident.split("_")
        if len(parts[0]) == 2 and (len(parts) == 1 or (len(parts) == 2 and len(parts[1]) == 2)):
            out.append(ident)
    return tuple(sorted(out, key=lambda ident: ident.replace("_", "-").lower()))


@cache
def locale_codes() -> frozenset[str]:
    """Appwrite's locale codes as requests write them: ``en``, ``en-us``, ``pt-br``."""
    return frozenset(ident.replace("_", "-").lower() for ident in locale_identifiers())


class LogBackend(BaseEmailBackend):
    """Writes each message (recipients, subject, plain-text body) to the ``apps.mail`` log
    instead of sending it: development servers without ``SMTP_HOST``."""

    def send_messages(self, email_messages: Any) -> int:
        for message in email_messages:
            log.info("mail to %s (not sent: no SMTP_HOST)\nSubject: %s\n\n%s", ", ".join(message.to),
                     message.subject, message.body)
        return len(email_messages)


def mail_language(name: str, locale: str) -> str:
    """The language folder to use for mail ``name`` and a requested ``locale``: the locale
    lower-cased (``pt-br``), else its language (``pt``), else :data:`DEFAULT_LANGUAGE`."""
    locale = (locale or "").strip().lower().replace("_", "-")[:16]
    for candidate in (locale, locale.split("-", 1)[0]):
        if candidate and candidate.replace("-", "").isalpha():
            try:
                get_template(f"mail/{candidate}/{name}.txt")
                return candidate
            except TemplateDoesNotExist:
                continue
    return DEFAULT_LANGUAGE


def render_mail(name: str, *, locale: str, context: dict[str, Any]) -> tuple[str, str, str]:
    """``(subject, text, html)`` of mail ``name`` in the language for ``locale``.

    Raises ``TemplateDoesNotExist`` when the mail has no English templates.
    """
    lang = mail_language(name, locale)
    ctx = {**context, "lang": lang}
    subject = " ".join(get_template(f"mail/{lang}/{name}.subject.txt").render(ctx).split())
    text = get_template(f"mail/{lang}/{name}.txt").render(ctx).strip() + "\n"
    html = get_template(f"mail/{lang}/{name}.html").render(ctx)
    return subject, text, html


def compose_mail(name: str, *, recipient: str, locale: str = DEFAULT_LANGUAGE, context: dict[str, Any],
                 recipient_name: str = "", rendered: tuple[str, str, str] | None = None,
                 sender: tuple[str, str] | None = None, reply_to: tuple[str, str] | None = None,
                 connection: BaseEmailBackend | None = None) -> EmailMultiAlternatives:
    """The message of mail ``name`` to ``recipient``: rendered for ``locale`` with ``context``
    (or ``rendered``, a ready ``(subject, text, html)``), from ``sender`` (``(name, email)``,
    default ``MAIL_SENDER_NAME``/``MAIL_SENDER_EMAIL``), with an optional ``reply_to``, sent
    through ``connection`` (default: Django's default mailer)."""
    subject, text, html = rendered or render_mail(name, locale=locale, context=context)
    sender_name, sender_email = sender or (settings.MAIL_SENDER_NAME, settings.MAIL_SENDER_EMAIL)
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        from_email=formataddr((sender_name, sender_email)),
        to=[formataddr((recipient_name, recipient)) if recipient_name else recipient],
        reply_to=[formataddr(reply_to)] if reply_to and reply_to[1] else None,
        connection=connection,
    )
    message.attach_alternative(html, "text/html")
    return message


@task(queue_name="mails", priority=10)
def send_templated_mail(*, name: str, recipient: str, locale: str = DEFAULT_LANGUAGE, context: dict[str, Any],
                        recipient_name: str = "") -> None:
    """Render mail ``name`` for ``locale`` with ``context`` and send it to ``recipient``.

    Any error (the mail server is down, refuses, times out) propagates, so the worker retries.
    """
    compose_mail(name, recipient=recipient, locale=locale, context=context, recipient_name=recipient_name).send()


def require_mail(project: dict[str, Any] | None = None) -> None:
    """Raise 503 ``general_smtp_disabled`` when no mail can be sent: production without
    ``SMTP_HOST``, unless ``project`` (the request's project row) has its own SMTP server on
    (``smtp_enabled``). Appwrite's rule for every route that sends one."""
    if not settings.MAIL_ENABLED and not (project or {}).get("smtp_enabled"):
        raise AppwriteError("general_smtp_disabled")


async def enqueue_mail(db: Database, *, name: str, recipient: str, locale: str, context: dict[str, Any],
                       recipient_name: str = "") -> str:
    """Queue mail ``name`` to ``recipient`` through ``db`` (``ctx.db`` or a transaction of it,
    see :func:`apps.core.tasks.queue.enqueue`); returns the task ID. ``context`` must be JSON data."""
    from apps.core.tasks.queue import enqueue

    return await enqueue(db, send_templated_mail, name=name, recipient=recipient, locale=locale or "",
                         context=context, recipient_name=recipient_name)
