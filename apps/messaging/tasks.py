"""Sending messages: the worker task ``send_message`` (queue ``messaging``).

A run takes a ``processing`` message (or a ``scheduled`` one whose time has come: ``scheduled``
is the ``scheduledAt`` it was queued for, so a run queued before the message was re-scheduled
does nothing). The first run lists the recipients as rows of ``messaging_delivery``
(:mod:`apps.messaging.delivery`); every run sends to those not sent yet, through one sender per
provider, and records each outcome (``sent``, or ``failed`` with the reason).

Failures never reach the API call that queued the message. While some recipients failed and the
worker has attempts left (``TASKS_MAX_ATTEMPTS``), the run ends with :class:`DeliveryIncomplete`
so the worker runs it again after its back-off; only the failed recipients are tried again. The
last run sets ``deliveredTotal``, ``deliveryErrors`` (one line per failed recipient: Appwrite's
``Failed sending to target <identifier> with error: <reason>``), ``deliveredAt`` and the status:
``sent`` when at least one recipient got it, else ``failed``.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from typing import Any

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.tasks import task
from django.utils import timezone

from apps.core.drivers.db import as_dt
from apps.messaging import crypto
from apps.messaging.delivery import recipients
from apps.messaging.senders import DeliveryError, make_sender

log = logging.getLogger("apps.messaging")
BATCH = 500


class DeliveryIncomplete(Exception):
    """Some recipients failed; the worker runs the task again later."""


def _message(message_id: int) -> dict | None:
    with connection.cursor() as cur:
        cur.execute("SELECT id, project_id, uid, provider_type, topics, users, targets, data, status, scheduled_at "
                    "FROM messaging_message WHERE id = %s", [message_id])
        row = cur.fetchone()
    if row is None:
        return None
    keys = ("id", "project_id", "uid", "provider_type", "topics", "users", "targets", "data", "status", "scheduled_at")
    out = dict(zip(keys, row, strict=True))
    for key in ("topics", "users", "targets", "data"):
        if isinstance(out[key], str):
            out[key] = orjson.loads(out[key])
    return out


def _senders(project_id: int, provider_uids: set[str]) -> dict[str, Any]:
    """Provider uid -> a sender, or the :class:`DeliveryError` that stands for it."""
    out: dict[str, Any] = {}
    for uid in provider_uids:
        with connection.cursor() as cur:
            cur.execute("SELECT provider, enabled, credentials, options FROM messaging_provider "
                        "WHERE project_id = %s AND uid = %s", [project_id, uid])
            row = cur.fetchone()
        if row is None or not row[1]:
            out[uid] = DeliveryError(f"provider {uid} is gone or disabled")
            continue
        options = orjson.loads(row[3]) if isinstance(row[3], str) else row[3] or {}
        try:
            out[uid] = make_sender(row[0], crypto.unseal(row[2], bound_to=f"{project_id}/{uid}"), options)
        except (crypto.CredentialsUnreadable, DeliveryError) as exc:
            out[uid] = DeliveryError(str(exc))
    return out


def _record(results: list[tuple[int, str, str]]) -> None:
    """Store ``(delivery id, status, error)`` outcomes, a batch per statement."""
    with connection.cursor() as cur:
        cur.executemany("UPDATE messaging_delivery SET status = %s, error = %s, attempts = attempts + 1 WHERE id = %s",
                        [(status, error, pk) for pk, status, error in results])


def _expire(project_id: int, identifiers: list[str]) -> None:
    if identifiers:
        with connection.cursor() as cur:
            cur.executemany("UPDATE messaging_target SET expired = %s WHERE project_id = %s AND provider_type = 'push' "
                            "AND identifier = %s", [(True, project_id, i) for i in identifiers])
        from apps.core.drivers.cache import invalidate_sync
        from apps.messaging.api.targets import project_targets_tag

        invalidate_sync(project_targets_tag(project_id))  # the users' cached targets (``expired``)


def _attachments(project_id: int, items: list[str]) -> list[tuple[str, str, bytes]]:
    """``[(filename, MIME type, bytes)]`` of the ``bucketId:fileId`` attachments. Raises
    :class:`DeliveryError` when one is gone."""
    from apps.storage import backends

    out = []
    for item in items:
        bucket_uid, _, file_uid = item.partition(":")
        with connection.cursor() as cur:
            cur.execute("SELECT f.name, f.mime_type, f.key, f.size_original FROM storage_file f JOIN storage_bucket b "
                        "ON b.id = f.bucket_id WHERE b.project_id = %s AND b.uid = %s AND f.uid = %s "
                        "AND f.status = 'ready'", [project_id, bucket_uid, file_uid])
            row = cur.fetchone()
        if row is None:
            raise DeliveryError(f"attachment {item} is gone")
        try:
            out.append((row[0], row[1] or "application/octet-stream", backends.read_bytes(row[2], 0, row[3])))
        except OSError as exc:
            raise DeliveryError(f"attachment {item} cannot be read: {exc}") from exc
    return out


def _send_pending(message: dict) -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT id, identifier, provider_uid FROM messaging_delivery WHERE message_id = %s "
                    "AND status <> 'sent' ORDER BY id", [message["id"]])
        pending = cur.fetchall()
    by_provider: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for pk, identifier, provider_uid in pending:
        by_provider[provider_uid].append((pk, identifier))
    senders = _senders(message["project_id"], {uid for uid in by_provider if uid})
    data = message["data"]
    if message["provider_type"] == "email" and data.get("attachments") and by_provider:
        try:
            data = {**data, "_files": _attachments(message["project_id"], data["attachments"])}
        except DeliveryError as exc:
            for sender in senders.values():
                if not isinstance(sender, DeliveryError):
                    sender.close()
            senders = dict.fromkeys(senders, exc)
    for provider_uid, items in by_provider.items():
        sender = senders.get(provider_uid) if provider_uid else DeliveryError(
            f"no enabled {message['provider_type']} provider in the project")
        results, gone = [], []
        for pk, identifier in items:
            try:
                if isinstance(sender, DeliveryError):
                    raise sender
                sender.send(identifier, data)
                results.append((pk, "sent", ""))
            except DeliveryError as exc:
                results.append((pk, "failed", str(exc)[:2000]))
                if exc.expired:
                    gone.append(identifier)
            if len(results) >= BATCH:
                _record(results)
                results = []
        _record(results)
        _expire(message["project_id"], gone)
        if not isinstance(sender, DeliveryError) and sender is not None:
            sender.close()


def _totals(message_id: int) -> tuple[int, int, list[str]]:
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM messaging_delivery WHERE message_id = %s AND status = 'sent'", [message_id])
        sent = cur.fetchone()[0]
        cur.execute("SELECT identifier, error FROM messaging_delivery WHERE message_id = %s AND status <> 'sent' "
                    "ORDER BY id LIMIT 1000", [message_id])
        failed = cur.fetchall()
    errors = [f"Failed sending to target {ident} with error: {error}" for ident, error in failed]
    return sent, len(failed), errors


def _finish(message_id: int, status: str, sent: int, errors: list[str], delivered: bool) -> None:
    with connection.cursor() as cur:
        cur.execute("UPDATE messaging_message SET status = %s, delivered_total = %s, delivery_errors = %s, "
                    "delivered_at = %s, updated_at = %s WHERE id = %s",
                    [status, sent, orjson.dumps(errors).decode(), timezone.now() if delivered else None,
                     timezone.now(), message_id])


@task(queue_name="messaging", priority=5, takes_context=True)
def send_message(context, *, message_id: int, scheduled: str = "") -> None:
    """Send message ``message_id`` (pk) to its recipients not reached yet; see the module."""
    with transaction.atomic():
        if connection.vendor == "postgresql":  # runs of one message take their start in turn
            with connection.cursor() as cur:
                cur.execute("SELECT id FROM messaging_message WHERE id = %s FOR UPDATE", [message_id])
        message = _message(message_id)
        if message is None or message["status"] not in ("processing", "scheduled"):
            return
        first_run = context is None or context.attempt <= 1
        if scheduled and message["status"] == "processing" and first_run:
            return  # a second run queued for the same time (re-scheduled to it): the first one sends
        if message["status"] == "scheduled":
            at = as_dt(message["scheduled_at"])
            if not scheduled or at is None or at != dt.datetime.fromisoformat(scheduled):
                return  # re-scheduled (another run is queued) or made a draft
            with connection.cursor() as cur:
                cur.execute("UPDATE messaging_message SET status = 'processing' WHERE id = %s", [message_id])
        with connection.cursor() as cur:
            cur.execute("SELECT 1 FROM messaging_delivery WHERE message_id = %s LIMIT 1", [message_id])
            listed = cur.fetchone() is not None
            if not listed:
                rows = recipients(message)
                cur.executemany("INSERT INTO messaging_delivery (message_id, target_uid, provider_uid, identifier, "
                                "status, error, attempts) VALUES (%s, %s, %s, %s, 'pending', '', 0)",
                                [(message_id, t, p or "", i) for t, i, p in rows])
                if not rows:
                    _finish(message_id, "failed", 0, ["No valid recipients found."], False)
                    return
    _send_pending(message)
    sent, failed, errors = _totals(message_id)
    attempt = context.attempt if context is not None else settings.TASKS_MAX_ATTEMPTS
    if failed and attempt < settings.TASKS_MAX_ATTEMPTS:
        _finish(message_id, "processing", sent, errors, False)
        raise DeliveryIncomplete(f"message {message['uid']}: {failed} recipients failed, next attempt later")
    _finish(message_id, "sent" if sent else "failed", sent, errors, True)
    log.info("message %s: %d delivered, %d failed", message["uid"], sent, failed)
