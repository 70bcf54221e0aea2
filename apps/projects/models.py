"""Projects, their allowed web origins, and API keys."""

from __future__ import annotations

from django.db import models


class Project(models.Model):
    """An Appwrite project: every user, table, bucket and key belongs to one.

    ``uid`` is the public project ID (contract §8 ID rules).
    """

    uid = models.CharField("project ID", max_length=36, unique=True)
    name = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "projects_project"

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"


class Platform(models.Model):
    """An allowed web origin of a project (Appwrite's web platform), e.g.
    ``https://app.example.com`` or ``http://localhost:5173``; ``*`` allows any origin."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="platforms")
    origin = models.CharField(max_length=255)

    class Meta:
        db_table = "projects_platform"
        constraints = [models.UniqueConstraint(fields=["project", "origin"], name="platform_unique_origin")]
        indexes = [models.Index(fields=["origin"], name="platform_origin_idx")]

    def __str__(self) -> str:
        return self.origin


class ApiKey(models.Model):
    """A server API key. Only the SHA-256 of the secret is stored; ``scopes`` is a list of
    Appwrite scope names; ``expire`` ``None`` means never."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="keys")
    uid = models.CharField("key ID", max_length=36)
    name = models.CharField(max_length=128)
    scopes = models.JSONField(default=list)
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    expire = models.DateTimeField(null=True, blank=True)
    accessed_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "projects_apikey"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="apikey_unique_uid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"
