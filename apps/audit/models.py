"""The audit log (Appwrite's ``audit`` collection): user accounts' entries, as ``GET /account/logs``
and ``GET /users/{userId}/logs`` serve them, and the Messaging service's, as its ``.../logs``
routes serve them by ``resource``."""

from __future__ import annotations

from django.db import models

from apps.accounts.models import User
from apps.projects.models import Project


class Log(models.Model):
    """One event of a user's account: ``event`` is Appwrite's audit name (``session.create``,
    ``user.update``, ``membership.create``...), ``resource`` what it touched (``user/<id>``,
    ``team/<id>``, ``provider/<id>``, ``message/<id>``...). ``user`` is the account the entry belongs
    to; a write made with an API key on something no user owns (a messaging provider, topic or
    message) has none. ``actor_*`` say who did it: the user themself (``user``), an API key
    (``keyProject``: Appwrite names it ``app.<project>@service.<host>`` with the key's name) or
    a guest. ``ip`` and ``user_agent`` are the request's; the user agent is parsed when the log
    is read, never on the write path."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="logs", null=True, blank=True)
    event = models.CharField(max_length=64)
    resource = models.CharField(max_length=128, blank=True, default="")
    mode = models.CharField(max_length=16, default="default")
    actor_type = models.CharField(max_length=16)
    actor_uid = models.CharField(max_length=36, blank=True, default="")
    actor_email = models.CharField(max_length=320, blank=True, default="")
    actor_name = models.CharField(max_length=128, blank=True, default="")
    ip = models.CharField(max_length=64, blank=True, default="")
    user_agent = models.CharField(max_length=512, blank=True, default="")
    time = models.DateTimeField()

    class Meta:
        db_table = "audit_log"
        indexes = [
            models.Index(fields=["user", "-time", "-id"], name="audit_log_user_time_idx"),
            models.Index(fields=["project", "resource", "-time", "-id"], name="audit_log_resource_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event} {self.time:%Y-%m-%d %H:%M:%S}"
