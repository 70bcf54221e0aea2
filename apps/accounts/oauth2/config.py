"""Per-project provider settings: writing them (admin, ``manage.py oauthprovider``) and reading
them for a sign-in (raw SQL, secrets decrypted).

A provider is usable when it is enabled and has a client ID and a client secret (Appwrite's
rule; otherwise 412 ``project_provider_disabled``). The generic ``oidc`` provider also needs a
discovery URL or its authorization and token endpoints; Apple needs its team and key IDs.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db import transaction

from apps.accounts.models import OAuthProvider
from apps.accounts.oauth2 import crypto
from apps.accounts.oauth2.providers import GITLAB_DEFAULT_BASE, MICROSOFT_DEFAULT_TENANT, SPECS, tenant_problem
from apps.core.errors import AppwriteError

URL_FIELDS = ("discovery_url", "authorization_url", "token_url", "userinfo_url", "base_url")
TEXT_FIELDS = ("client_id", "tenant", "team_id", "key_id")


class ConfigError(ValueError):
    """Provider settings that cannot work; the message is for the operator."""


def _check_url(name: str, value: str) -> None:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{name} must be an http(s) URL, got {value!r}")


def validate(provider: str, values: dict, has_secret: bool) -> None:
    """Check one provider's settings (``values``: the model's field names).

    Raises :class:`ConfigError`: an unknown provider, a malformed URL, or (when ``enabled``)
    a missing client ID, client secret, OpenID endpoint or Apple ID.
    """
    spec = SPECS.get(provider)
    if spec is None:
        raise ConfigError(f"unknown provider {provider!r}; this server supports: {', '.join(SPECS)}")
    for name in URL_FIELDS:
        if values.get(name):
            _check_url(name, values[name])
    problem = tenant_problem(values.get("tenant") or "")
    if problem:
        raise ConfigError(f"{problem}, got {values['tenant']!r}")
    if not values.get("enabled"):
        return
    missing = [n for n in ("client_id",) if not values.get(n)]
    if not has_secret:
        missing.append("client secret")
    if provider == "oidc" and not values.get("discovery_url") and not (
            values.get("authorization_url") and values.get("token_url")):
        missing.append("discovery_url (or authorization_url and token_url)")
    missing += [n for n in spec.needs if not values.get(n)]
    if missing:
        raise ConfigError(f"{provider} cannot be enabled without: {', '.join(missing)}")


def provider_configure(*, project_uid: str, provider: str, client_secret: str | None = None,
                       **values) -> OAuthProvider:
    """Create or update the settings of ``provider`` for project ``project_uid``.

    ``values`` are model fields (``enabled``, ``client_id``, ``discovery_url``...); fields not
    given keep their value. ``client_secret`` ``None`` keeps the stored secret, ``""`` clears
    it, anything else replaces it (stored encrypted). Raises :class:`ConfigError` for an
    unknown project or bad settings (:func:`validate`).
    """
    from apps.projects.models import Project

    unknown = set(values) - {"enabled", *TEXT_FIELDS, *URL_FIELDS}
    if unknown:
        raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    with transaction.atomic():
        project = Project.objects.filter(uid=project_uid).first()
        if project is None:
            raise ConfigError(f"project {project_uid!r} does not exist")
        row = OAuthProvider.objects.select_for_update().filter(project=project, provider=provider).first()
        row = row or OAuthProvider(project=project, provider=provider)
        for name, value in values.items():
            setattr(row, name, value.strip() if isinstance(value, str) else value)
        if client_secret is not None:
            row.set_client_secret(client_secret)
        validate(provider, {f: getattr(row, f) for f in ("enabled", *TEXT_FIELDS, *URL_FIELDS)},
                 has_secret=bool(row.client_secret))
        row.save()
    return row


def keys_rotate() -> int:
    """Re-encrypt every stored secret and provider token under the first key of
    ``OAUTH2_SECRET_KEYS``; returns how many values were rewritten.

    Raises :class:`apps.accounts.oauth2.crypto.SecretUnreadable` (and changes nothing) when a
    value opens with none of the keys.
    """
    from apps.accounts.models import Identity, Session

    count = 0
    with transaction.atomic():
        for model, fields in ((OAuthProvider, ("client_secret",)),
                              (Identity, ("provider_access_token", "provider_refresh_token")),
                              (Session, ("provider_access_token", "provider_refresh_token"))):
            for row in model.objects.select_for_update().exclude(**{f: "" for f in fields}).only("pk", *fields):
                for f in fields:
                    setattr(row, f, crypto.rotate(getattr(row, f)))
                row.save(update_fields=list(fields))
                count += 1
    return count


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """A provider ready to use: the spec's URLs resolved with the project's settings
    (``""`` = take it from the discovery document) and the client secret in clear."""

    name: str
    client_id: str
    client_secret: str
    discovery_url: str
    authorize_url: str
    token_url: str
    userinfo_url: str
    team_id: str
    key_id: str
    version: str  # changes whenever the settings change (a cache key)


async def provider_config_get(ctx, provider: str) -> ProviderConfig:
    """The usable settings of ``provider`` for ``ctx.project``.

    Raises 400 ``project_provider_unsupported`` for a provider this server has no handler for,
    412 ``project_provider_disabled`` when it is off, lacks a client ID or secret, or its
    stored secret cannot be decrypted.
    """
    spec = SPECS.get(provider)
    if spec is None:
        raise AppwriteError("project_provider_unsupported")
    row = await ctx.db.fetchone(
        "SELECT * FROM accounts_oauthprovider WHERE project_id = %s AND provider = %s",
        (ctx.project["id"], provider),
    )
    if row is None or not row["enabled"]:
        raise AppwriteError("project_provider_disabled", "This provider is disabled. Please enable the provider "
                            "in the project's OAuth2 settings to continue.")
    try:
        secret = crypto.decrypt(row["client_secret"])
    except crypto.SecretUnreadable:
        secret = ""
    if not row["client_id"] or not secret:
        raise AppwriteError("project_provider_disabled", "This provider is disabled. Please configure the "
                            "provider's client ID and client secret to continue.")
    values = {"tenant": row["tenant"] or MICROSOFT_DEFAULT_TENANT,
              "base": (row["base_url"] or GITLAB_DEFAULT_BASE).rstrip("/")}
    discovery = row["discovery_url"] if provider == "oidc" else ""
    return ProviderConfig(
        name=provider,
        client_id=row["client_id"],
        client_secret=secret,
        discovery_url=discovery,
        authorize_url=row["authorization_url"] or spec.authorize_url.format(**values),
        token_url=row["token_url"] or spec.token_url.format(**values),
        userinfo_url=row["userinfo_url"] or spec.userinfo_url.format(**values),
        team_id=row["team_id"],
        key_id=row["key_id"],
        version=f"{row['id']}:{row['updated_at']}",
    )
