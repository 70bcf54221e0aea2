"""The Webhooks service routes (Appwrite 1.9)."""

from apps.core.http.endpoint import Endpoint
from apps.webhooks import api as a
from apps.webhooks import inputs as i

W = "/webhooks/{webhookId}"
R, WR = "webhooks.read", "webhooks.write"

endpoints = [
    Endpoint("GET", "/webhooks", a.webhooks_list, "webhooks.list", scope=R, input=i.WebhookList,
             response="webhookList"),
    Endpoint("POST", "/webhooks", a.webhook_create, "webhooks.create", scope=WR, input=i.WebhookCreate, status=201,
             response="webhook"),
    Endpoint("GET", W, a.webhook_get, "webhooks.get", scope=R, input=i.WebhookRef, response="webhook"),
    Endpoint("PUT", W, a.webhook_update, "webhooks.update", scope=WR, input=i.WebhookUpdate, response="webhook"),
    Endpoint("DELETE", W, a.webhook_delete, "webhooks.delete", scope=WR, input=i.WebhookRef, status=204),
    Endpoint("PATCH", W + "/secret", a.webhook_update_secret, "webhooks.updateSecret", scope=WR,
             input=i.WebhookSecretUpdate, response="webhook"),
]
