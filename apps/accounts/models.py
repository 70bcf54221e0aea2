"""Users and sessions of a project (contract §3)."""

from __future__ import annotations

from django.db import models

from apps.projects.models import Project


class User(models.Model):
    """A project's user. ``email`` is stored lower-cased (``""`` for anonymous users) and is
    unique per project; ``password`` is a Django hasher string (``""`` = no password)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="users")
    uid = models.CharField("user ID", max_length=36)
    email = models.CharField(max_length=320, blank=True, default="")
    name = models.CharField(max_length=128, blank=True, default="")
    password = models.CharField(max_length=255, blank=True, default="")
    status = models.BooleanField(default=True)
    labels = models.JSONField(default=list, blank=True)
    prefs = models.JSONField(default=dict, blank=True)
    email_verification = models.BooleanField(default=False)
    phone = models.CharField(max_length=32, blank=True, default="")
    phone_verification = models.BooleanField(default=False)
    registration = models.DateTimeField()
    password_update = models.DateTimeField(null=True, blank=True)
    # Hashes of the last passwords (newest last), kept while the project's password history is on.
    # Database defaults (db_default) too, so that SQL inserts which predate these columns work.
    password_history = models.JSONField(default=list, db_default=[], blank=True)
    mfa = models.BooleanField("MFA", default=False, db_default=False)
    # The TOTP authenticator (one per user, as in Appwrite): its base32 secret, and whether the
    # user proved it works. Recovery codes are single-use, 10 hex characters each.
    mfa_totp_secret = models.CharField(max_length=64, blank=True, default="", db_default="")
    mfa_totp_verified = models.BooleanField(default=False, db_default=False)
    mfa_recovery_codes = models.JSONField(default=list, db_default=[], blank=True)
    accessed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "accounts_user"
        constraints = [
            models.UniqueConstraint(fields=["project", "uid"], name="user_unique_uid"),
            models.UniqueConstraint(
                fields=["project", "email"], condition=~models.Q(email=""), name="user_unique_email"
            ),
        ]

    def __str__(self) -> str:
        return self.email or self.uid


class Session(models.Model):
    """A login session. Only the SHA-256 of its secret is stored (``secret_hash``)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sessions")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="sessions")
    uid = models.CharField("session ID", max_length=36)
    secret_hash = models.CharField(max_length=64, unique=True)
    provider = models.CharField(max_length=32, default="email")
    provider_uid = models.CharField(max_length=320, blank=True, default="")
    factors = models.JSONField(default=list, blank=True)
    ip = models.CharField(max_length=64, blank=True, default="")
    user_agent = models.CharField(max_length=512, blank=True, default="")
    expire = models.DateTimeField()
    # When the session last completed an MFA challenge (Appwrite's mfaUpdatedAt).
    mfa_updated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "accounts_session"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="session_unique_uid")]
        indexes = [models.Index(fields=["user", "expire"], name="session_user_idx")]

    def __str__(self) -> str:
        return self.uid


class Token(models.Model):
    """A single-use secret that proves control of an account (Appwrite's tokens): magic URL, email
    code, phone code, OAuth2 hand-off, a server-made token, email verification, password recovery.

    ``type`` uses Appwrite's numbers (:class:`TokenType`). Only ``sha256(secret)`` is stored; a
    token is deleted when it is used. Short codes (6 digits) are not unique across users, so a
    token is always looked up through its user.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tokens")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="tokens")
    uid = models.CharField("token ID", max_length=36)
    type = models.PositiveSmallIntegerField()
    secret_hash = models.CharField(max_length=64)
    phrase = models.CharField(max_length=64, blank=True, default="")
    ip = models.CharField(max_length=64, blank=True, default="")
    user_agent = models.CharField(max_length=512, blank=True, default="")
    expire = models.DateTimeField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "accounts_token"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="token_unique_uid")]
        indexes = [models.Index(fields=["user", "type"], name="token_user_type_idx")]

    def __str__(self) -> str:
        return self.uid


class Challenge(models.Model):
    """An MFA challenge (Appwrite's ``challenges``): ``type`` is ``totp``, ``email``, ``phone`` or
    ``recoveryCode``; for email codes only ``sha256(code)`` is stored. Deleted when completed."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="challenges")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="challenges")
    uid = models.CharField("challenge ID", max_length=36)
    type = models.CharField(max_length=16)
    code_hash = models.CharField(max_length=64, blank=True, default="")
    expire = models.DateTimeField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "accounts_challenge"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="challenge_unique_uid")]

    def __str__(self) -> str:
        return self.uid


class TokenType(models.IntegerChoices):
    """Appwrite's token types (``TOKEN_TYPE_*`` constants)."""

    VERIFICATION = 2
    RECOVERY = 3
    INVITE = 4
    MAGIC_URL = 5
    PHONE = 6
    OAUTH2 = 7
    GENERIC = 8
    EMAIL = 9
