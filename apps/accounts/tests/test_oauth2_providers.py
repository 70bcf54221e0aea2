"""Each named provider against its published configuration, and how each one's user is read.

This machine has no outside network, so the providers' published facts are constants here,
copied from their discovery documents (``/.well-known/openid-configuration``, Discord's
``/.well-known/oauth-authorization-server``) and API references (GitHub's OAuth app and REST
docs, Microsoft Graph ``/me``, GitLab ``/api/v4/user``, Discord ``/users/@me``).
"""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwt
from joserfc.jwk import ECKey

from apps.accounts.oauth2 import client
from apps.accounts.oauth2.config import ProviderConfig
from apps.accounts.oauth2.providers import APPWRITE_PROVIDERS, GITLAB_DEFAULT_BASE, MICROSOFT_DEFAULT_TENANT, SPECS
from apps.core.drivers.runtime import run_sync

PUBLISHED = {
    "github": {  # docs.github.com: "Authorizing OAuth apps", REST "Users" and "Emails"
        "authorization_endpoint": "https://github.com/login/oauth/authorize",
        "token_endpoint": "https://github.com/login/oauth/access_token",
        "user": "https://api.github.com/user",
        "emails": "https://api.github.com/user/emails",
        "scopes_supported": ["user:email", "read:user", "user"],
    },
    "google": {  # https://accounts.google.com/.well-known/openid-configuration
        "issuer": "https://accounts.google.com",
        "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
        "token_endpoint": "https://oauth2.googleapis.com/token",
        "userinfo_endpoint": "https://openidconnect.googleapis.com/v1/userinfo",
        "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
        "scopes_supported": ["openid", "email", "profile"],
    },
    "gitlab": {  # https://gitlab.com/.well-known/openid-configuration; docs "Users API"
        "issuer": "https://gitlab.com",
        "authorization_endpoint": "https://gitlab.com/oauth/authorize",
        "token_endpoint": "https://gitlab.com/oauth/token",
        "user": "https://gitlab.com/api/v4/user",
        "jwks_uri": "https://gitlab.com/oauth/discovery/keys",
        "scopes_supported": ["api", "read_api", "read_user", "openid", "profile", "email"],
    },
    "microsoft": {  # https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration; Graph /me
        "authorization_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
        "token_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        "user": "https://graph.microsoft.com/v1.0/me",
        "scopes_supported": ["openid", "profile", "email", "offline_access", "user.read"],
    },
    "apple": {  # https://appleid.apple.com/.well-known/openid-configuration
        "issuer": "https://appleid.apple.com",
        "authorization_endpoint": "https://appleid.apple.com/auth/authorize",
        "token_endpoint": "https://appleid.apple.com/auth/token",
        "jwks_uri": "https://appleid.apple.com/auth/keys",
        "response_modes_supported": ["query", "fragment", "form_post"],
        "scopes_supported": ["openid", "email", "name"],
    },
    "discord": {  # https://discord.com/.well-known/oauth-authorization-server; docs "Get Current User"
        "issuer": "https://discord.com",
        "authorization_endpoint": "https://discord.com/api/oauth2/authorize",
        "token_endpoint": "https://discord.com/api/oauth2/token",
        "user": "https://discord.com/api/users/@me",
        "scopes_supported": ["identify", "email"],
    },
}


def _config(name: str, **extra) -> ProviderConfig:
    spec = SPECS[name]
    values = {"tenant": MICROSOFT_DEFAULT_TENANT, "base": GITLAB_DEFAULT_BASE}
    base = dict(name=name, client_id="cid", client_secret="secret", discovery_url="",
                authorize_url=spec.authorize_url.format(**values), token_url=spec.token_url.format(**values),
                userinfo_url=spec.userinfo_url.format(**values), team_id="", key_id="", version="1")
    return ProviderConfig(**{**base, **extra})


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_endpoints_match_published_configuration(name):
    published, spec, cfg = PUBLISHED[name], SPECS[name], _config(name)
    assert cfg.authorize_url == published["authorization_endpoint"]
    assert cfg.token_url == published["token_endpoint"]
    assert cfg.userinfo_url == (published.get("userinfo_endpoint") or published.get("user", ""))
    if "emails" in published:
        assert spec.emails_url == published["emails"]
    if spec.id_token:
        issuers, jwks = spec.id_token
        assert published["issuer"] in issuers and jwks == published["jwks_uri"]
    assert set(spec.scopes) <= set(published["scopes_supported"])
    if "response_mode" in spec.authorize_params and "response_modes_supported" in published:
        assert spec.authorize_params["response_mode"] in published["response_modes_supported"]
    assert all(url.startswith("https://") for url in (cfg.authorize_url, cfg.token_url))


def test_named_providers_are_appwrite_names():
    assert set(SPECS) <= APPWRITE_PROVIDERS
    assert {"github", "google", "gitlab", "microsoft", "apple", "discord", "oidc"} <= set(SPECS)


def test_microsoft_tenant_and_gitlab_base_are_substituted():
    assert SPECS["microsoft"].authorize_url.format(tenant="contoso.onmicrosoft.com") == \
        "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize"
    assert SPECS["gitlab"].token_url.format(base="https://git.example.com") == "https://git.example.com/oauth/token"


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_authorization_url(name):
    ctx = SimpleNamespace(mode="sync")
    url, verifier, nonce = run_sync(client.authorization_url(
        ctx, _config(name), SPECS[name], redirect_uri="https://api.example.com/cb", state="st", scopes=["extra"]))
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == PUBLISHED[name]["authorization_endpoint"]
    q = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert (q["client_id"], q["redirect_uri"], q["state"], q["response_type"]) == (
        "cid", "https://api.example.com/cb", "st", "code")
    assert q["scope"].split() == [*SPECS[name].scopes, "extra"]
    assert q["code_challenge_method"] == "S256" and len(verifier) >= 43 and q["nonce"] == nonce
    for key, value in SPECS[name].authorize_params.items():
        assert q[key] == value


PROFILE_CASES = [
    ("github primary wins", "github", {"id": 42, "name": "Octo", "login": "octo"}, {},
     [{"email": "old@x.io", "verified": True, "primary": False}, {"email": "me@x.io", "verified": False, "primary": True}],
     {}, ("42", "me@x.io", False, "Octo")),
    ("github first verified without primary", "github", {"id": 42, "name": None}, {},
     [{"email": "a@x.io", "verified": False}, {"email": "b@x.io", "verified": True}], {}, ("42", "b@x.io", True, "")),
    ("google", "google", {"sub": "g1", "email": "g@x.io", "email_verified": True, "name": "G"}, {}, [], {},
     ("g1", "g@x.io", True, "G")),
    ("gitlab confirmed", "gitlab", {"id": 7, "email": "l@x.io", "confirmed_at": "2020-01-01T00:00:00Z", "name": "L"},
     {}, [], {}, ("7", "l@x.io", True, "L")),
    ("gitlab unconfirmed", "gitlab", {"id": 7, "email": "l@x.io", "confirmed_at": None}, {}, [], {},
     ("7", "l@x.io", False, "")),
    ("microsoft never verified", "microsoft", {"id": "m1", "userPrincipalName": "m@x.io", "displayName": "M"}, {},
     [], {}, ("m1", "m@x.io", False, "M")),
    ("apple from id token and posted name", "apple", {}, {"sub": "a1", "email": "a@x.io", "email_verified": "true"},
     [], {"user": json.dumps({"name": {"firstName": "Ada", "lastName": "L"}})}, ("a1", "a@x.io", True, "Ada L")),
    ("apple bad posted user", "apple", {}, {"sub": "a1", "email": "a@x.io", "email_verified": False}, [],
     {"user": "{not json"}, ("a1", "a@x.io", False, "")),
    ("discord", "discord", {"id": "d1", "email": "d@x.io", "verified": True, "username": "dee"}, {}, [], {},
     ("d1", "d@x.io", True, "dee")),
    ("oidc userinfo", "oidc", {"sub": "s", "email": "o@x.io", "email_verified": True, "name": "O"}, {}, [], {},
     ("s", "o@x.io", True, "O")),
    ("oidc id token only", "oidc", {}, {"sub": "s", "email": "o@x.io"}, [], {}, ("s", "o@x.io", False, "")),
    ("no id", "discord", {"email": "d@x.io"}, {}, [], {}, ("", "d@x.io", False, "")),
]


@pytest.mark.parametrize("case", PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES])
def test_profile(case):
    _, name, userinfo, claims, emails, form, expected = case
    p = SPECS[name].profile(userinfo, claims, emails, form)
    assert (p.uid, p.email, p.verified, p.name) == expected


def test_apple_client_secret_is_an_es256_jwt_signed_with_the_p8_key():
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    cfg = _config("apple", client_secret=pem, team_id="TEAM123456", key_id="KEY1234567", client_id="com.example.web")
    secret = client._client_secret(cfg)
    public = ECKey.import_key(private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    decoded = jwt.decode(secret, public)
    assert (decoded.header["alg"], decoded.header["kid"]) == ("ES256", "KEY1234567")
    claims = decoded.claims
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("TEAM123456", "com.example.web", "https://appleid.apple.com")
    assert 0 < claims["exp"] - int(time.time()) <= 300
    with pytest.raises(client.ProviderError):
        client._client_secret(_config("apple", client_secret="not a key"))
