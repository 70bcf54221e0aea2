"""A project's webhooks and the log of their deliveries."""

from __future__ import annotations

from django.db import models

from apps.projects.models import Project


class Webhook(models.Model):
    """Appwrite's webhook: POST the event's payload to ``url`` for every event named in
    ``events`` (``users.*.create``, ``databases.*.tables.*.rows.*``...). ``signature_key`` signs
    each delivery (``X-Appwrite-Webhook-Signature``); ``tls`` verifies the receiver's
    certificate; ``attempts`` counts failed deliveries in a row (reset by a success) and
    ``logs`` describes the last failure; after ``WEBHOOK_MAX_FAILED_ATTEMPTS`` the webhook is
    disabled, as Appwrite's worker does."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    uid = models.CharField("webhook ID", max_length=36)
    name = models.CharField(max_length=128)
    description = models.CharField(max_length=256, blank=True, default="")
    url = models.URLField(max_length=2048)
    events = models.JSONField(default=list)
    enabled = models.BooleanField(default=True)
    tls = models.BooleanField("verify TLS certificates", default=False)
    auth_username = models.CharField(max_length=256, blank=True, default="")
    auth_password = models.CharField(max_length=256, blank=True, default="")
    signature_key = models.CharField(max_length=256)
    attempts = models.PositiveIntegerField(default=0)
    logs = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "webhooks_webhook"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="webhook_unique_uid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"


class Delivery(models.Model):
    """One attempt to deliver one event to one webhook: the receiver's status (0 when no
    answer: refused, timed out, TLS failure), the error text, how long it took (ms) and which
    attempt of its task it was."""

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    events = models.JSONField(default=list)
    status = models.PositiveSmallIntegerField(default=0)
    ok = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")
    duration_ms = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "webhooks_delivery"
        indexes = [models.Index(fields=["webhook", "-created_at"], name="delivery_webhook_idx")]

    def __str__(self) -> str:
        return f"{self.webhook_id}: {self.status or self.error[:40]}"
