"""Webhooks end to end: the official Python SDK 27's ``Webhooks`` service manages them, a write
fires them, the worker delivers to a local receiver with Appwrite's headers and signature, a
failing receiver is retried, logged and finally disabled, and a receiver that does not answer
never holds up the API."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.models import Webhook, WebhookList
from appwrite.services.users import Users
from appwrite.services.webhooks import Webhooks

from tests.mail import wait_until


def _client(server, project) -> Client:
    return Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key)


def _signature(key: str, url: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(key.encode(), url.encode() + body, hashlib.sha1).digest()).decode()


def test_sdk_manages_webhooks_and_a_signed_delivery_arrives(asgi_server, project, receiver, webhook_worker, sql):
    client = _client(asgi_server, project)
    webhooks = Webhooks(client)
    url = receiver.url("/ok")
    hook = webhooks.create(webhook_id=ID.unique(), url=url, name="Users", events=["users.*.create"])
    assert isinstance(hook, Webhook)
    assert hook.enabled and not hook.tls and len(hook.secret) == 128 and hook.attempts == 0
    assert webhooks.get(hook.id).url == url
    listed = webhooks.list()
    assert isinstance(listed, WebhookList) and [w.id for w in listed.webhooks] == [hook.id]

    user = Users(client).create(user_id=ID.unique(), email=f"w{time.monotonic_ns()}@example.com",
                                password="password123", name="Hooked")
    got = wait_until(lambda: [r for r in receiver.at("/ok") if r.json.get("$id") == user.id], 30, "the delivery")[0]
    assert got.headers["content-type"] == "application/json"
    assert got.headers["x-appwrite-webhook-signature"] == _signature(hook.secret, url, got.body)
    assert got.headers["x-appwrite-webhook-id"] == hook.id
    assert got.headers["x-appwrite-webhook-name"] == "Users"
    assert got.headers["x-appwrite-webhook-project-id"] == project.id
    events = got.headers["x-appwrite-webhook-events"].split(",")
    assert f"users.{user.id}.create" in events and "users.*.create" in events
    assert got.json["email"] == user.email
    rows = wait_until(lambda: sql("SELECT d.status, d.ok, d.attempt FROM webhooks_delivery d JOIN webhooks_webhook w "
                                  "ON w.id = d.webhook_id WHERE w.uid = %s", [hook.id]), 10, "the delivery log")
    assert rows == [(200, True, 1)]

    # A new signature key signs the next delivery.
    rotated = webhooks.update_secret(hook.id, secret="a-new-secret-key")
    assert rotated.secret == "a-new-secret-key"
    renamed = webhooks.update(hook.id, name="Renamed", url=url, events=["users.*.update.name"], tls=True)
    assert renamed.name == "Renamed" and renamed.tls and renamed.events == ["users.*.update.name"]
    Users(client).update_name(user.id, "Renamed user")
    got = wait_until(lambda: [r for r in receiver.at("/ok") if r.json.get("name") == "Renamed user"], 30,
                     "the update delivery")[0]
    assert got.headers["x-appwrite-webhook-signature"] == _signature("a-new-secret-key", url, got.body)

    webhooks.delete(hook.id)
    try:
        webhooks.get(hook.id)
        raise AssertionError("deleted webhook still found")
    except AppwriteException as exc:
        assert exc.code == 404 and exc.type == "webhook_not_found"


def test_failing_receiver_is_retried_logged_and_disabled(asgi_server, project, receiver, webhook_worker, sql):
    client = _client(asgi_server, project)
    webhooks = Webhooks(client)
    hook = webhooks.create(webhook_id=ID.unique(), url=receiver.url("/fail"), name="Failing",
                           events=["users.*.create"])
    user = Users(client).create(user_id=ID.unique(), name="Unlucky")

    def attempts():
        return sql("SELECT d.status, d.ok, d.attempt FROM webhooks_delivery d JOIN webhooks_webhook w "
                   "ON w.id = d.webhook_id WHERE w.uid = %s ORDER BY d.id", [hook.id])

    # WEBHOOK_MAX_FAILED_ATTEMPTS=3 in the worker: three tries (the worker's back-off between
    # them), then the webhook is disabled and the task stops being retried.
    wait_until(lambda: not webhooks.get(hook.id).enabled, 60, "the webhook to be disabled")
    assert attempts() == [(500, False, 1), (500, False, 2), (500, False, 3)]
    assert len([r for r in receiver.at("/fail") if r.json.get("$id") == user.id]) == 3
    disabled = webhooks.get(hook.id)
    assert disabled.attempts == 3
    assert "Status code: 500" in disabled.logs and "receiver says no" in disabled.logs
    # The third run ended the task (a finished task's row is removed; no fourth attempt queued).
    pk = sql("SELECT id FROM webhooks_webhook WHERE uid = %s", [hook.id])[0][0]
    wait_until(lambda: sql("SELECT status FROM django_tasks_database_dbtaskresult WHERE queue_name = 'webhooks' "
                           "AND args_kwargs::text LIKE %s", [f'%"webhook_pk": {pk},%']) == [],
               30, "the delivery task to end")
    assert len(attempts()) == 3

    # Re-enabling it starts the count again.
    again = webhooks.update(hook.id, name="Failing", url=receiver.url("/fail"), events=["users.*.create"],
                            enabled=True)
    assert again.enabled and again.attempts == 0


def test_unanswering_receiver_never_holds_up_the_api(asgi_server, project, receiver, webhook_worker):
    client = _client(asgi_server, project)
    Webhooks(client).create(webhook_id=ID.unique(), url=receiver.url("/held"), name="Held",
                            events=["users.*.create"])
    users = Users(client)
    receiver.release.clear()
    try:
        first = users.create(user_id=ID.unique(), name="One")
        # The worker is now waiting for the receiver, which answers nobody until released;
        # the API keeps answering, and the first delivery did reach the receiver.
        wait_until(lambda: any(r.json.get("$id") == first.id for r in receiver.at("/held")), 30, "the held delivery")
        second = users.create(user_id=ID.unique(), name="Two")
        assert users.get(second.id).name == "Two"
    finally:
        receiver.release.set()
    wait_until(lambda: any(r.json.get("$id") == second.id for r in receiver.at("/held")), 30,
               "the second delivery")
