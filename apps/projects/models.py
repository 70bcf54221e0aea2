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
    # Set through the Project service (apps.projects.api): labels, and the project's own SMTP server
    # (Appwrite's custom SMTP; ``smtp_password`` holds the Fernet token of the password).
    labels = models.JSONField(default=list, blank=True)
    smtp_enabled = models.BooleanField("custom SMTP", default=False)
    smtp_host = models.CharField(max_length=256, blank=True, default="")
    smtp_port = models.PositiveIntegerField(null=True, blank=True)
    smtp_username = models.CharField(max_length=256, blank=True, default="")
    smtp_password = models.TextField(blank=True, default="", editable=False)
    smtp_secure = models.CharField(max_length=8, blank=True, default="", help_text="'', 'tls' or 'ssl'")
    smtp_sender_name = models.CharField(max_length=256, blank=True, default="")
    smtp_sender_email = models.CharField(max_length=320, blank=True, default="")
    smtp_reply_to_name = models.CharField(max_length=256, blank=True, default="")
    smtp_reply_to_email = models.CharField(max_length=320, blank=True, default="")
    # The Project service's service and protocol switches: what is listed here refuses requests
    # without an API key (apps.core.http.pipeline, apps.realtime.handshake).
    services_disabled = models.JSONField(
        "disabled services", default=list, blank=True,
        help_text="Services that refuse requests without an API key (Appwrite's service IDs, e.g. [\"storage\"]).")
    protocols_disabled = models.JSONField(
        "disabled protocols", default=list, blank=True,
        help_text='Protocols that refuse requests without an API key: "rest", "graphql", "websocket".')

    class Meta:
        db_table = "projects_project"

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"


class Platform(models.Model):
    """A platform of a project. A web platform allows an origin: ``origin`` is
    ``https://app.example.com``, ``http://localhost:5173`` or ``*`` (any origin) when made by the
    admin or ``createproject``; one made through the Project service has ``hostname`` (Appwrite's
    rule: any scheme and port of that host) and an empty ``origin``. Native platforms (``type``
    android, apple, linux, windows) hold their application identifier in ``key``
    (``fingerprints``: Android's certificate SHA-256 fingerprints)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="platforms")
    origin = models.CharField(max_length=255, blank=True, default="")
    uid = models.CharField("platform ID", max_length=36, blank=True, default="")
    name = models.CharField(max_length=128, blank=True, default="")
    type = models.CharField(max_length=16, default="web")
    hostname = models.CharField(max_length=256, blank=True, default="")
    key = models.CharField(max_length=256, blank=True, default="")
    fingerprints = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "projects_platform"
        constraints = [
            models.UniqueConstraint(fields=["project", "origin"], condition=~models.Q(origin=""),
                                    name="platform_unique_origin"),
            models.UniqueConstraint(fields=["project", "uid"], condition=~models.Q(uid=""),
                                    name="platform_unique_uid"),
        ]
        indexes = [models.Index(fields=["origin"], name="platform_origin_idx")]

    def __str__(self) -> str:
        return self.origin or self.name

    def save(self, *args, **kwargs):
        """Give a platform made without an ID (the admin's inline) a fresh one; keep the times."""
        from django.utils import timezone

        from apps.core.domain.ids import unique_id

        if not self.uid:
            self.uid = unique_id()
            self.name = self.name or (self.origin or self.hostname)[:128]
        now = timezone.now()
        self.created_at = self.created_at or now
        self.updated_at = now
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "updated_at"}
        super().save(*args, **kwargs)


class ApiKey(models.Model):
    """A server API key. Only the SHA-256 of the secret is stored; ``scopes`` is a list of
    Appwrite scope names; ``expire`` ``None`` means never."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="keys")
    uid = models.CharField("key ID", max_length=36)
    name = models.CharField(max_length=128)
    description = models.CharField(max_length=256, blank=True, default="")
    # An ephemeral key (POST /v1/project/keys/ephemeral): short-lived, hidden from the key list.
    ephemeral = models.BooleanField(default=False)
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


class Variable(models.Model):
    """A project variable (Appwrite's project-level ``variables``): ``key``/``value`` text; a
    ``secret`` one is never shown again through the API (its value reads as empty)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="variables")
    uid = models.CharField("variable ID", max_length=36)
    key = models.CharField(max_length=255)
    value = models.TextField(blank=True, default="")
    secret = models.BooleanField(default=True)
    description = models.CharField(max_length=256, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "projects_variable"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="variable_unique_uid"),
                       models.UniqueConstraint(fields=["project", "key"], name="variable_unique_key")]

    def __str__(self) -> str:
        return self.key


class MailTemplate(models.Model):
    """A project's own version of one mail (``template_id``: Appwrite's ``verification``,
    ``magicSession``, ``recovery``...) in one ``locale``; empty fields keep the server's text."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="mail_templates")
    template_id = models.CharField(max_length=32)
    locale = models.CharField(max_length=16)
    subject = models.CharField(max_length=256, blank=True, default="")
    message = models.TextField(blank=True, default="")
    sender_name = models.CharField(max_length=256, blank=True, default="")
    sender_email = models.CharField(max_length=320, blank=True, default="")
    reply_to_email = models.CharField(max_length=320, blank=True, default="")
    reply_to_name = models.CharField(max_length=256, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "projects_mailtemplate"
        constraints = [models.UniqueConstraint(fields=["project", "template_id", "locale"],
                                               name="mailtemplate_unique")]

    def __str__(self) -> str:
        return f"{self.template_id} ({self.locale})"
