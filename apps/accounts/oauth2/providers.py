"""The OAuth2 providers this server signs in with, and how each one's user is read.

Each :class:`ProviderSpec` holds a provider's published endpoints and default scopes (checked
against the providers' own documentation and discovery documents in
``apps/accounts/tests/test_oauth2_providers.py``) and a function that turns what the provider
returns into a :class:`Profile`. The user fields and the "email verified" rule of each provider
follow Appwrite's provider classes (``src/Appwrite/Auth/OAuth2/*.php``), so a user who moves
an application here keeps the same identity (``providerUid``).

``APPWRITE_PROVIDERS`` is every name Appwrite accepts in the ``{provider}`` path segment: a name
there that has no :class:`ProviderSpec` answers 400 ``project_provider_unsupported``, any other
name 400 ``general_argument_invalid``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Appwrite 1.9.6 app/config/oAuthProviders.php, plus the names the Python SDK 27 enum adds.
APPWRITE_PROVIDERS = frozenset("""
amazon apple auth0 authentik autodesk bitbucket bitly box dailymotion discord disqus dropbox etsy
facebook figma fusionauth github gitlab google keycloak kick linkedin microsoft notion oidc okta
paypal paypalSandbox podio salesforce slack spotify stripe tradeshift tradeshiftBox twitch
wordpress x yahoo yammer yandex zoho zoom appwrite cloudflare huggingface kakao resend tiktok webflow
""".split())


@dataclass(frozen=True, slots=True)
class Profile:
    """The provider's view of the user: ``uid`` (their stable ID, Appwrite's ``providerUid``),
    ``email`` (``""`` when none), whether the provider vouches for that email, and a display
    ``name`` (``""`` when none)."""

    uid: str
    email: str
    verified: bool
    name: str


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider.

    URLs may hold ``{tenant}`` (Microsoft) or ``{base}`` (GitLab, for self-managed servers).
    ``id_token`` is ``(issuer values, JWKS URL)`` for providers whose ID token is validated
    (signature, audience, issuer, expiry, nonce). ``emails_url`` is a second user call (GitHub's
    address list). ``profile(userinfo, id_claims, emails, form)`` builds the :class:`Profile`
    (``form`` = the callback's own parameters: Apple posts the user's name there once).
    ``authorize_params`` are sent on the authorization URL as they are; ``token_auth`` is how the
    client authenticates at the token endpoint (RFC 6749 §2.3.1).
    """

    name: str
    title: str
    authorize_url: str
    token_url: str
    userinfo_url: str
    scopes: tuple[str, ...]
    profile: Callable[[dict, dict, list, dict], Profile]
    id_token: tuple[tuple[str, ...], str] | None = None
    emails_url: str = ""
    authorize_params: dict[str, str] = field(default_factory=dict)
    token_auth: str = "client_secret_post"
    needs: tuple[str, ...] = ()  # extra settings the provider cannot work without


def _text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list, bool)):
        return ""
    return str(value).strip()


def _true(value: Any) -> bool:
    """Providers send verification flags as booleans or as ``"true"`` (Apple)."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _github(user: dict, claims: dict, emails: list, form: dict) -> Profile:
    # The primary address wins, else the first verified one (Appwrite Github::getUser).
    primary = next((e for e in emails if isinstance(e, dict) and e.get("primary")), None)
    verified = next((e for e in emails if isinstance(e, dict) and e.get("verified") is True), None)
    chosen = primary or verified or {}
    return Profile(_text(user.get("id")), _text(chosen.get("email")), _true(chosen.get("verified")),
                   _text(user.get("name")))


def _openid(user: dict, claims: dict, emails: list, form: dict) -> Profile:
    # OpenID Connect standard claims, from the user info response, else from the ID token.
    source = user or claims
    return Profile(_text(source.get("sub")), _text(source.get("email")), _true(source.get("email_verified")),
                   _text(source.get("name")))


def _gitlab(user: dict, claims: dict, emails: list, form: dict) -> Profile:
    return Profile(_text(user.get("id")), _text(user.get("email")), bool(user.get("confirmed_at")),
                   _text(user.get("name")))


def _microsoft(user: dict, claims: dict, emails: list, form: dict) -> Profile:
    # Microsoft Graph does not vouch for userPrincipalName as a mailbox (Appwrite: never verified).
    return Profile(_text(user.get("id")), _text(user.get("userPrincipalName")), False,
                   _text(user.get("displayName")))


def _apple(user: dict, claims: dict, emails: list, form: dict) -> Profile:
    # Apple has no user info endpoint: the validated ID token is the user; the name comes only
    # on the first sign-in, as the posted ``user`` JSON.
    name = ""
    raw = form.get("user")
    if isinstance(raw, str) and raw:
        import orjson

        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = {}
        parts = data.get("name") if isinstance(data, dict) else None
        if isinstance(parts, dict):
            name = " ".join(p for p in (_text(parts.get("firstName")), _text(parts.get("lastName"))) if p)
    return Profile(_text(claims.get("sub")), _text(claims.get("email")), _true(claims.get("email_verified")), name)


def _discord(user: dict, claims: dict, emails: list, form: dict) -> Profile:
    return Profile(_text(user.get("id")), _text(user.get("email")), _true(user.get("verified")),
                   _text(user.get("username")))


SPECS: dict[str, ProviderSpec] = {spec.name: spec for spec in [
    ProviderSpec(
        "github", "GitHub",
        authorize_url="https://github.com/login/oauth/authorize",
        token_url="https://github.com/login/oauth/access_token",
        userinfo_url="https://api.github.com/user",
        emails_url="https://api.github.com/user/emails",
        scopes=("user:email",),
        profile=_github,
    ),
    ProviderSpec(
        "google", "Google",
        authorize_url="https://accounts.google.com/o/oauth2/v2/auth",
        token_url="https://oauth2.googleapis.com/token",
        userinfo_url="https://openidconnect.googleapis.com/v1/userinfo",
        scopes=("openid", "email", "profile"),
        id_token=(("https://accounts.google.com", "accounts.google.com"), "https://www.googleapis.com/oauth2/v3/certs"),
        profile=_openid,
    ),
    ProviderSpec(
        "gitlab", "GitLab",
        authorize_url="{base}/oauth/authorize",
        token_url="{base}/oauth/token",
        userinfo_url="{base}/api/v4/user",
        scopes=("read_user",),
        profile=_gitlab,
    ),
    ProviderSpec(
        "microsoft", "Microsoft",
        authorize_url="https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
        token_url="https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
        userinfo_url="https://graph.microsoft.com/v1.0/me",
        scopes=("offline_access", "user.read"),
        authorize_params={"response_mode": "query"},
        profile=_microsoft,
    ),
    ProviderSpec(
        "apple", "Apple",
        authorize_url="https://appleid.apple.com/auth/authorize",
        token_url="https://appleid.apple.com/auth/token",
        userinfo_url="",
        scopes=("name", "email"),
        # Apple posts the result back (form_post) whenever name or email is asked for.
        authorize_params={"response_mode": "form_post"},
        id_token=(("https://appleid.apple.com",), "https://appleid.apple.com/auth/keys"),
        profile=_apple,
        needs=("team_id", "key_id"),
    ),
    ProviderSpec(
        "discord", "Discord",
        authorize_url="https://discord.com/api/oauth2/authorize",
        token_url="https://discord.com/api/oauth2/token",
        userinfo_url="https://discord.com/api/users/@me",
        scopes=("identify", "email"),
        profile=_discord,
    ),
    # The generic OpenID Connect provider: endpoints from the settings or the discovery document.
    ProviderSpec(
        "oidc", "OpenID Connect",
        authorize_url="", token_url="", userinfo_url="",
        scopes=("openid", "profile", "email"),
        profile=_openid,
        token_auth="client_secret_basic",
    ),
]}

GITLAB_DEFAULT_BASE = "https://gitlab.com"
MICROSOFT_DEFAULT_TENANT = "common"
# Microsoft's tenant forms: a keyword, a tenant ID (a GUID) or a tenant's domain name. The value
# goes into the sign-in URLs' path, so ``../x`` or ``a/b`` would point them elsewhere.
_TENANT = re.compile(
    r"(common|organizations|consumers"
    r"|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
    r"|(?=.{1,253}\Z)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})")


def tenant_problem(value: str) -> str | None:
    """Why ``value`` cannot be a Microsoft tenant, or ``None`` when it can (empty: the default)."""
    if not value or _TENANT.fullmatch(value):
        return None
    return ("tenant must be common, organizations, consumers, a tenant ID (a GUID) "
            "or a tenant's domain name (contoso.onmicrosoft.com)")
