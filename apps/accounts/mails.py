"""The account mails: what each carries, queued in the caller's transaction.

Each function enqueues ``apps.core.mail.send_templated_mail`` with this app's templates
(``templates/mail/<lang>/<name>.*``) in the language of the request's ``X-Appwrite-Locale``.
Template variables: ``project`` (name), ``user`` (the recipient's name), ``url`` or ``otp``,
``phrase``, ``team``, ``inviter``.
"""

from __future__ import annotations

from apps.core.mail import enqueue_mail


def request_locale(ctx) -> str:
    """The locale the caller asked for (``X-Appwrite-Locale``), or ``""``."""
    return ctx.headers.get("x-appwrite-locale", "")[:32]


async def link_mail(ctx, db, *, name: str, user: dict, url: str, phrase: str = "") -> str:
    """Queue a mail carrying ``url`` (``verification``, ``recovery``, ``magic-url``) to
    ``user``'s email through ``db``; returns the task ID."""
    return await enqueue_mail(db, name=name, recipient=user["email"], recipient_name=user["name"],
                              locale=request_locale(ctx),
                              context={"project": ctx.project["name"], "user": user["name"], "url": url,
                                       "phrase": phrase})


async def code_mail(ctx, db, *, name: str, user: dict, otp: str, phrase: str = "") -> str:
    """Queue a mail carrying the code ``otp`` (``email-code``, ``mfa-challenge``) to ``user``."""
    return await enqueue_mail(db, name=name, recipient=user["email"], recipient_name=user["name"],
                              locale=request_locale(ctx),
                              context={"project": ctx.project["name"], "user": user["name"], "otp": otp,
                                       "phrase": phrase})


async def invitation_mail(db, *, recipient: str, recipient_name: str = "", project: str, team: str,
                          inviter: str, url: str, locale: str) -> str:
    """Queue a team invitation to ``recipient``: ``inviter`` invites them to ``team`` of
    ``project``; ``url`` is the accept link (already carrying its ``membershipId``, ``userId``,
    ``secret``, ``teamId``, ``teamName``). ``db`` is the request's ``ctx.db`` or a transaction
    of it; ``locale`` the request's ``X-Appwrite-Locale``. Returns the task ID."""
    return await enqueue_mail(db, name="invitation", recipient=recipient, recipient_name=recipient_name,
                              locale=locale,
                              context={"project": project, "user": recipient_name, "team": team,
                                       "inviter": inviter, "url": url})
