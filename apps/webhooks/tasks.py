"""Delivering one event to one webhook (queue ``webhooks``, run by ``manage.py worker``).

Appwrite's webhook worker rules: ``POST`` of the event's JSON model to the webhook's URL with
``Content-Type: application/json`` and the headers ``X-Appwrite-Webhook-Id``, ``-Events``
(comma-separated), ``-Name``, ``-User-Id``, ``-Project-Id`` and ``-Signature``: the base64 of
HMAC-SHA1 over ``url + body`` keyed with the webhook's signature key. HTTP basic auth when both
``authUsername`` and ``authPassword`` are set; the certificate is verified when ``tls`` is on.
A status of 400 or more, or no answer within ``WEBHOOK_TIMEOUT`` seconds, is a failure: the
webhook's ``attempts`` grows, ``logs`` holds the failure, and the task raises so the worker
retries it with back-off (``TASKS_MAX_ATTEMPTS``, ``TASKS_RETRY_DELAY``). After
``WEBHOOK_MAX_FAILED_ATTEMPTS`` failures in a row the webhook is disabled and retries stop. A
success resets ``attempts``. Every attempt is a :class:`apps.webhooks.models.Delivery` row; the
newest :data:`KEEP` of each webhook are kept.

In production (``APP_ENV=production``) a URL whose host resolves to a non-public address is
refused (Appwrite's ``PublicHostname`` rule), unless it is in ``WEBHOOK_ALLOW_NETWORKS``; the
host is resolved once and the connection goes to the checked address (:mod:`apps.webhooks.post`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time

from django.conf import settings
from django.db.models import F
from django.tasks import task

log = logging.getLogger("apps.webhooks")
KEEP = 100  # delivery log rows kept per webhook (the newest)
MAX_LOG_BODY = 10_000  # characters of the receiver's answer kept in ``logs`` (Appwrite: 10 KB)


class DeliveryFailed(Exception):
    """The receiver did not accept the delivery; the worker retries the task."""


def signature(key: str, url: str, body: bytes) -> str:
    """``X-Appwrite-Webhook-Signature``: base64(HMAC-SHA1(key, url + body))."""
    return base64.b64encode(hmac.new(key.encode(), url.encode() + body, hashlib.sha1).digest()).decode()


def _post(hook, body: bytes, headers: dict) -> tuple[int, str, str]:
    """``(status, response text, client error)``; status 0 when there was no answer
    (:func:`apps.webhooks.post.post`: one resolution, the address checked and pinned)."""
    from apps.webhooks.post import post

    # HTTP basic auth only when both halves are set.
    auth = (hook.auth_username, hook.auth_password) if hook.auth_username and hook.auth_password else None
    status, text, error = post(hook.url, body, headers, verify=hook.tls, auth=auth, timeout=settings.WEBHOOK_TIMEOUT)
    return status, text[:MAX_LOG_BODY], error


@task(queue_name="webhooks", takes_context=True)
def deliver(context, *, webhook_pk: int, events: list[str], payload: dict, user_id: str = "",
            project_uid: str = "") -> None:
    """POST ``payload`` for ``events`` to webhook ``webhook_pk`` (see the module docstring).
    Raises :class:`DeliveryFailed` when the receiver refused it and the webhook is still enabled."""
    from apps.webhooks.models import Delivery, Webhook

    hook = Webhook.objects.filter(pk=webhook_pk, enabled=True).first()
    if hook is None:
        return  # deleted or disabled since the event
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"Appwrite-Server v{settings.APPWRITE_VERSION}. Please report abuse at {settings.MAIL_SENDER_EMAIL}",
        "X-Appwrite-Webhook-Id": hook.uid,
        "X-Appwrite-Webhook-Events": ",".join(events),
        "X-Appwrite-Webhook-Name": hook.name,
        "X-Appwrite-Webhook-User-Id": user_id,
        "X-Appwrite-Webhook-Project-Id": project_uid,
        "X-Appwrite-Webhook-Signature": signature(hook.signature_key, hook.url, body),
    }
    started = time.monotonic()
    status, text, error = _post(hook, body, headers)
    took = int((time.monotonic() - started) * 1000)
    ok = not error and 0 < status < 400
    Delivery.objects.create(webhook=hook, events=events[:1], status=status, ok=ok, error=error or (text if not ok else ""),
                            duration_ms=took, attempt=context.attempt)
    old = list(Delivery.objects.filter(webhook=hook).order_by("-id").values_list("id", flat=True)[KEEP:KEEP + 100])
    if old:
        Delivery.objects.filter(id__in=old).delete()
    if ok:
        if hook.attempts:
            Webhook.objects.filter(pk=hook.pk).update(attempts=0)
        return
    logs = f"URL: {hook.url}\nMethod: POST\n"
    logs += (f"Client Error: {error}\nEvents: {', '.join(events)}\n" if error
             else f"Status code: {status}\nBody: \n{text}\n")
    Webhook.objects.filter(pk=hook.pk).update(attempts=F("attempts") + 1, logs=logs)
    hook.refresh_from_db(fields=["attempts"])
    if hook.attempts >= settings.WEBHOOK_MAX_FAILED_ATTEMPTS:
        Webhook.objects.filter(pk=hook.pk).update(enabled=False)
        _invalidate(hook.project_id)
        log.warning("webhook %s disabled after %d failed deliveries", hook.uid, hook.attempts)
        return
    raise DeliveryFailed(logs)


def _invalidate(project_pk: int) -> None:
    from apps.core.drivers.cache import invalidate_sync
    from apps.webhooks.dispatch import webhooks_tag

    invalidate_sync(webhooks_tag(project_pk))
