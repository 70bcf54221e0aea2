"""Users and sessions of a project."""

from __future__ import annotations

from django.db import models

from apps.projects.models import Project


class User(models.Model):
    """A project's user. ``email`` is stored lower-cased (``""`` for anonymous users) and is
    unique per project, like ``phone`` (E.164, ``""`` for none); ``password`` is a Django hasher
    string (``""`` = no password; imported algorithms in ``apps.accounts.passwords.hashers``)."""

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
    # The newest TOTP time step (unix time // 30) that completed a challenge: a code of that step
    # or an older one is refused, so one code cannot complete challenges on two sessions.
    mfa_totp_step = models.BigIntegerField("last TOTP step used", default=0, db_default=0)
    # Whether this user may act as another user of the project (Appwrite 1.9's impersonation:
    # the X-Appwrite-Impersonate-User-* headers on their session's requests).
    impersonator = models.BooleanField(default=False, db_default=False)
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
            models.UniqueConstraint(
                fields=["project", "phone"], condition=~models.Q(phone=""), name="user_unique_phone"
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
    # OAuth2 sessions: the provider's tokens, encrypted at rest (apps.accounts.oauth2.crypto).
    provider_access_token = models.TextField(blank=True, db_default="")
    provider_refresh_token = models.TextField(blank=True, db_default="")
    provider_access_token_expiry = models.DateTimeField(null=True, blank=True)
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
    # The address a mailed token was sent to ("" for tokens that are not mailed). Such a token
    # is valid only while that address is still the user's email.
    email = models.CharField(max_length=320, blank=True, default="", db_default="")
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


def _provider_choices():
    from apps.accounts.oauth2.providers import SPECS

    return [(name, spec.title) for name, spec in SPECS.items()]


class OAuthProvider(models.Model):
    """A project's settings for one OAuth2 provider (Appwrite's ``oAuthProviders``).

    ``client_secret`` holds the Fernet token of the secret (Apple: of the ``.p8`` private key),
    never the secret itself: write it with :meth:`set_client_secret`
    (apps.accounts.oauth2.crypto). The endpoint fields are for the generic ``oidc`` provider
    (a discovery URL, or the three endpoints); ``tenant`` is Microsoft's, ``base_url`` a
    self-managed GitLab's, ``team_id``/``key_id`` Apple's.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="oauth_providers")
    provider = models.CharField(max_length=32, choices=_provider_choices)
    enabled = models.BooleanField(default=False)
    client_id = models.CharField("client ID", max_length=512, blank=True, default="",
                                 help_text="The app's client ID (Apple: the Services ID).")
    client_secret = models.TextField(blank=True, default="", editable=False)
    discovery_url = models.URLField(
        "discovery URL", max_length=1024, blank=True, default="",
        help_text="OpenID Connect: the issuer's /.well-known/openid-configuration document.")
    authorization_url = models.URLField("authorization endpoint", max_length=1024, blank=True, default="")
    token_url = models.URLField("token endpoint", max_length=1024, blank=True, default="")
    userinfo_url = models.URLField("user info endpoint", max_length=1024, blank=True, default="")
    tenant = models.CharField(max_length=128, blank=True, default="",
                              help_text="Microsoft: common, organizations, consumers or a tenant ID.")
    base_url = models.URLField("base URL", max_length=1024, blank=True, default="",
                               help_text="GitLab: a self-managed server (empty = https://gitlab.com).")
    team_id = models.CharField("team ID", max_length=64, blank=True, default="", help_text="Apple")
    key_id = models.CharField("key ID", max_length=64, blank=True, default="", help_text="Apple")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "accounts_oauthprovider"
        verbose_name = "OAuth2 provider"
        constraints = [models.UniqueConstraint(fields=["project", "provider"], name="oauthprovider_unique")]

    def __str__(self) -> str:
        return f"{self.provider} ({self.project.uid})"

    def clean(self) -> None:
        """The tenant's form (every writer runs this: the API through ``full_clean``, the admin's form)."""
        from django.core.exceptions import ValidationError

        from apps.accounts.oauth2.providers import tenant_problem

        problem = tenant_problem(self.tenant)
        if problem:
            raise ValidationError({"tenant": problem})

    def set_client_secret(self, plain: str) -> None:
        """Store ``plain`` encrypted (``""`` clears it)."""
        from apps.accounts.oauth2.crypto import encrypt

        self.client_secret = encrypt(plain)


class Identity(models.Model):
    """A provider account linked to a user (Appwrite's identities): one per (provider,
    ``provider_uid``) in a project. The provider's tokens are encrypted at rest."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="identities")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="identities")
    uid = models.CharField("identity ID", max_length=36)
    provider = models.CharField(max_length=32)
    provider_uid = models.CharField(max_length=2048)
    provider_email = models.CharField(max_length=320, blank=True, default="")
    provider_access_token = models.TextField(blank=True, default="")
    provider_refresh_token = models.TextField(blank=True, default="")
    provider_access_token_expiry = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "accounts_identity"
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["project", "uid"], name="identity_unique_uid"),
            models.UniqueConstraint(fields=["project", "provider", "provider_uid"], name="identity_unique_provider_uid"),
        ]
        indexes = [
            models.Index(fields=["user"], name="identity_user_idx"),
            models.Index(fields=["project", "provider_email"], name="identity_email_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.provider_uid}"


class OAuth2State(models.Model):
    """A sign-in that went to a provider and has not come back yet. The browser carries only a
    random key (the OAuth2 ``state``); its SHA-256 is stored with what the flow must remember
    (success/failure URLs, PKCE verifier, nonce). Deleted when used or expired, so a state works
    once."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    key_hash = models.CharField(max_length=64, unique=True)
    provider = models.CharField(max_length=32)
    data = models.JSONField(default=dict)
    expire = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "accounts_oauth2state"

    def __str__(self) -> str:
        return f"{self.provider} sign-in until {self.expire:%Y-%m-%d %H:%M}"
