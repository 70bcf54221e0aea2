"""Messaging: providers, user targets, topics, subscribers, messages and their deliveries.

Public IDs are ``uid`` (Appwrite's ``$id``), unique per project. A provider's ``credentials`` is
its credentials object encrypted with :mod:`apps.messaging.crypto` (never returned whole: the
responses leave out the secret keys). ``provider_type`` is ``email``, ``sms`` or ``push``.
"""

from __future__ import annotations

from django.db import models

from apps.accounts.models import User
from apps.projects.models import Project


class Provider(models.Model):
    """A messaging provider: ``provider`` names the API (``smtp``, ``twilio``...), ``options``
    holds the non-secret settings (sender, ``from``...)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    uid = models.CharField("provider ID", max_length=36)
    name = models.CharField(max_length=128)
    provider = models.CharField(max_length=16)
    provider_type = models.CharField(max_length=8)
    enabled = models.BooleanField(default=False)
    credentials = models.TextField(default="", blank=True)  # encrypted JSON object
    options = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "messaging_provider"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="msg_provider_unique_uid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"


class Target(models.Model):
    """Where a user receives messages: an email address, a phone number or a push token."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(Provider, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    uid = models.CharField("target ID", max_length=36)
    name = models.CharField(max_length=128, default="", blank=True)
    provider_type = models.CharField(max_length=8)
    identifier = models.CharField(max_length=2048)
    expired = models.BooleanField(default=False)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "messaging_target"
        constraints = [
            models.UniqueConstraint(fields=["project", "uid"], name="msg_target_unique_uid"),
            models.UniqueConstraint(fields=["project", "provider_type", "identifier"], name="msg_target_unique_id"),
        ]
        indexes = [models.Index(fields=["user"], name="msg_target_user_idx")]

    def __str__(self) -> str:
        return self.uid


class Topic(models.Model):
    """A topic; ``subscribe`` lists the roles that may subscribe their own targets to it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    uid = models.CharField("topic ID", max_length=36)
    name = models.CharField(max_length=128)
    description = models.CharField(max_length=2048, default="", blank=True)
    subscribe = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "messaging_topic"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="msg_topic_unique_uid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"


class Subscriber(models.Model):
    """A target subscribed to a topic."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    # The target's pk, not a foreign key: a deleted user's targets are removed by the accounts
    # purge (raw SQL, no cascade), and a subscriber of a gone target is never read (reads join).
    target_id = models.BigIntegerField(db_index=True)
    uid = models.CharField("subscriber ID", max_length=36)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "messaging_subscriber"
        constraints = [
            models.UniqueConstraint(fields=["project", "uid"], name="msg_subscriber_unique_uid"),
            models.UniqueConstraint(fields=["topic", "target_id"], name="msg_subscriber_unique_target"),
        ]

    def __str__(self) -> str:
        return self.uid


class Message(models.Model):
    """A message to topics, users and targets (public IDs in JSON lists). ``status``: ``draft``,
    ``scheduled``, ``processing``, ``sent``, ``failed``. ``data`` is the channel's content."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    uid = models.CharField("message ID", max_length=36)
    provider_type = models.CharField(max_length=8)
    topics = models.JSONField(default=list, blank=True)
    users = models.JSONField(default=list, blank=True)
    targets = models.JSONField(default=list, blank=True)
    data = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16)
    scheduled_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    delivered_total = models.IntegerField(default=0)
    delivery_errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "messaging_message"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="msg_message_unique_uid")]

    def __str__(self) -> str:
        return self.uid


class Delivery(models.Model):
    """One recipient of a message being sent: ``status`` ``pending``, ``sent`` or ``failed``;
    ``error`` the last failure's reason; ``attempts`` how many sends were tried. A retried send
    only tries the recipients not ``sent`` yet."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    target_uid = models.CharField(max_length=36, default="", blank=True)
    provider_uid = models.CharField(max_length=36, default="", blank=True)
    identifier = models.CharField(max_length=2048)
    status = models.CharField(max_length=8, default="pending")
    error = models.TextField(default="", blank=True)
    attempts = models.IntegerField(default=0)

    class Meta:
        db_table = "messaging_delivery"
        indexes = [models.Index(fields=["message", "status"], name="msg_delivery_status_idx")]

    def __str__(self) -> str:
        return f"{self.identifier}: {self.status}"
