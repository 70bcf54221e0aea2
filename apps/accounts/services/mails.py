"""The account mails: what each carries, queued in the caller's transaction.

Each function enqueues ``apps.projects.mails.send_project_mail`` with this app's templates
(``templates/mail/<lang>/<name>.*``) in the language of the request's ``X-Appwrite-Locale``;
the worker sends it through the project's own SMTP server and templates when it has them, else
through the server's mailer. Template variables: ``project`` (name), ``user`` (the recipient's
name), ``url`` or ``otp``, ``phrase``, ``team``, ``inviter``, and ``agent`` (the requesting
client's ``User-Agent``, for the custom templates' ``{{agentDevice}}``...).
"""

from __future__ import annotations

from typing import Any


def request_locale(ctx) -> str:
    """The locale the caller asked for (``X-Appwrite-Locale``), or ``""``."""
    return ctx.headers.get("x-appwrite-locale", "")[:32]


def request_agent(ctx) -> str:
    """The caller's ``User-Agent`` (at most 512 characters), or ``""``."""
    return ctx.headers.get("user-agent", "")[:512]


async def _enqueue(db, *, project_id: int, name: str, recipient: str, recipient_name: str, locale: str,
                   context: dict[str, Any]) -> str:
    from apps.core.tasks.queue import enqueue
    from apps.projects.mails import send_project_mail

    return await enqueue(db, send_project_mail, project_pk=project_id, name=name, recipient=recipient,
                         recipient_name=recipient_name, locale=locale or "", context=context)


async def link_mail(ctx, db, *, name: str, user: dict, url: str, phrase: str = "") -> str:
    """Queue a mail carrying ``url`` (``verification``, ``recovery``, ``magic-url``) to
    ``user``'s email through ``db``; returns the task ID."""
    return await _enqueue(db, project_id=ctx.project["id"], name=name, recipient=user["email"],
                          recipient_name=user["name"], locale=request_locale(ctx),
                          context={"project": ctx.project["name"], "user": user["name"], "url": url,
                                   "phrase": phrase, "agent": request_agent(ctx)})


async def code_mail(ctx, db, *, name: str, user: dict, otp: str, phrase: str = "") -> str:
    """Queue a mail carrying the code ``otp`` (``email-code``, ``mfa-challenge``) to ``user``."""
    return await _enqueue(db, project_id=ctx.project["id"], name=name, recipient=user["email"],
                          recipient_name=user["name"], locale=request_locale(ctx),
                          context={"project": ctx.project["name"], "user": user["name"], "otp": otp,
                                   "phrase": phrase, "agent": request_agent(ctx)})


async def invitation_mail(ctx, db, *, recipient: str, recipient_name: str = "", team: str, inviter: str,
                          url: str) -> str:
    """Queue a team invitation to ``recipient``: ``inviter`` invites them to ``team`` of the
    request's project; ``url`` is the accept link (already carrying its ``membershipId``,
    ``userId``, ``secret``, ``teamId``, ``teamName``). ``db`` is the request's ``ctx.db`` or a
    transaction of it. Returns the task ID."""
    return await _enqueue(db, project_id=ctx.project["id"], name="invitation", recipient=recipient,
                          recipient_name=recipient_name, locale=request_locale(ctx),
                          context={"project": ctx.project["name"], "user": recipient_name, "team": team,
                                   "inviter": inviter, "url": url, "agent": request_agent(ctx)})
