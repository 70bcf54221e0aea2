"""Projects, their allowed web origins, and API keys."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


class Project(models.Model):
    """An Appwrite project: every user, table, bucket and key belongs to one.

    ``uid`` is the public project ID.
    """

    uid = models.CharField("project ID", max_length=36, unique=True)
    name = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Authentication settings (Appwrite's project ``auths``), with the defaults Appwrite 1.9 gives a
    # new project. The API reads them through ``apps.projects.selectors.project_resolve``.
    auth_limit = models.PositiveIntegerField(
        "user limit", default=0, help_text="Most users the project may have (0 = no limit).")
    auth_max_sessions = models.PositiveIntegerField(
        "sessions per user", default=0,
        help_text="Most sessions a user may hold; the oldest beyond it end (0 = no limit).")
    auth_duration = models.PositiveIntegerField(
        "session length", null=True, blank=True, validators=[MinValueValidator(60), MaxValueValidator(31536000)],
        help_text="Seconds a new session lasts (empty = the server's SESSION_DURATION).")
    auth_password_history = models.PositiveSmallIntegerField(
        "password history", default=0, validators=[MaxValueValidator(20)], help_text="A new password may not be one of the last N (0 = off, at most 20).")
    auth_password_dictionary = models.BooleanField(
        "refuse common passwords", default=False, help_text="Refuse passwords from a list of common ones.")
    auth_password_min_length = models.PositiveSmallIntegerField(
        "password minimum length", default=8, validators=[MinValueValidator(8), MaxValueValidator(256)], help_text="At least 8, at most 256.")
    auth_personal_data_check = models.BooleanField(
        "refuse personal data in passwords", default=False,
        help_text="Refuse passwords that contain the user's ID, name, email or phone.")
    auth_session_alerts = models.BooleanField(
        "session alerts", default=False, help_text="Mail users when a new session starts.")
    auth_invalidate_sessions = models.BooleanField(
        "end sessions on password change", default=True,
        help_text="A password change or recovery ends the user's other sessions.")
    auth_mock_numbers = models.JSONField(
        "mock phone numbers", default=list, blank=True,
        help_text='Test numbers with fixed codes, e.g. [{"phone": "+15550100", "otp": "123456"}].')
    auth_email_password = models.BooleanField("email/password sign-in", default=True)
    auth_magic_url = models.BooleanField("magic URL sign-in", default=True)
    auth_email_otp = models.BooleanField("email code sign-in", default=True)
    auth_anonymous = models.BooleanField("anonymous sign-in", default=True)
    auth_invites = models.BooleanField("team invitations", default=True)
    auth_jwt = models.BooleanField("JWTs", default=True)
    auth_phone = models.BooleanField("phone sign-in", default=True)
    # Which member fields session users see in team membership lists (keys see all).
    memberships_user_name = models.BooleanField("members see names", default=True)
    memberships_user_email = models.BooleanField("members see emails", default=True)
    memberships_mfa = models.BooleanField("members see MFA status", default=True)
    memberships_user_id = models.BooleanField("members see user IDs", default=True)
    memberships_user_phone = models.BooleanField("members see phone numbers", default=True)
    memberships_user_accessed_at = models.BooleanField("members see last access", default=False)

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
        verbose_name = "API key"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="apikey_unique_uid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"
