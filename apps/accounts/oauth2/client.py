"""The OAuth2 / OpenID Connect protocol, done by Authlib: the authorization URL (state, PKCE
S256, nonce), the code-for-token exchange and its client authentication (RFC 6749 §4.1,
RFC 7636), ID-token validation against the provider's key set (OpenID Connect Core §3.1.3.7:
signature, ``iss``, ``aud``, ``azp``, ``exp``, ``iat``, ``nonce``, ``at_hash``), discovery
documents and user info.

Every call to a provider goes through httpx2 with ``OAUTH2_HTTP_TIMEOUT``: natively async under
ASGI, blocking under WSGI (where handlers never suspend, see apps.core.drivers.runtime). A provider that
cannot be reached, answers garbage or refuses the exchange raises :class:`ProviderError`,
carrying the Appwrite error type the flow reports; nothing here raises anything else.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuth2Client
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from django.conf import settings
from httpx2 import HTTPError, TimeoutException, TransportError
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import ECKey, KeySet
from joserfc.jws import JWSRegistry

from apps.accounts.oauth2.config import ProviderConfig
from apps.accounts.oauth2.providers import Profile, ProviderSpec
from apps.core.drivers.runtime import SYNC

log = logging.getLogger("apps.accounts.oauth2")
ID_TOKEN_LEEWAY = 60  # seconds of clock skew allowed on exp/iat


class ProviderError(Exception):
    """A sign-in step failed at or because of the provider. ``type`` is the Appwrite error type
    (``user_oauth2_provider_error``, ``user_oauth2_bad_request``, ``user_oauth2_unauthorized``,
    ``user_missing_id``); ``message`` is safe to show the user."""

    def __init__(self, type: str, message: str):
        super().__init__(message)
        self.type = type
        self.message = message


# URL -> (JSON document, monotonic expiry): discovery documents and key sets, per process.
_documents: dict[str, tuple[dict, float]] = {}


def _client(ctx, cfg: ProviderConfig, auth_method: str, **kwargs):
    cls = OAuth2Client if ctx.mode == SYNC else AsyncOAuth2Client
    return cls(client_id=cfg.client_id, client_secret=_client_secret(cfg), token_endpoint_auth_method=auth_method,
               timeout=settings.OAUTH2_HTTP_TIMEOUT, follow_redirects=False, **kwargs)


async def _call(ctx, client, method: str, *args, **kwargs):
    """``client.<method>(...)``: awaited under ASGI, called under WSGI; transport failures
    become :class:`ProviderError`."""
    what = next((a for a in args if isinstance(a, str) and "://" in a), method)
    try:
        if ctx.mode == SYNC:
            with client:
                return getattr(client, method)(*args, **kwargs)
        async with client:
            return await getattr(client, method)(*args, **kwargs)
    except TimeoutException:
        raise ProviderError("user_oauth2_provider_error",
                            f"The provider did not answer within {settings.OAUTH2_HTTP_TIMEOUT:g} s ({what}).") from None
    except TransportError as exc:
        raise ProviderError("user_oauth2_provider_error",
                            f"The provider could not be reached ({what}): {type(exc).__name__}.") from None
    except OAuthError as exc:
        kind = "user_oauth2_unauthorized" if exc.error == "invalid_client" else "user_oauth2_bad_request"
        detail = f"{exc.error}: {exc.description}" if exc.description else str(exc.error)
        raise ProviderError(kind, f"The provider refused the sign-in: {detail}") from None
    except (HTTPError, ValueError) as exc:  # an error status or a body that is not the JSON expected
        raise ProviderError("user_oauth2_provider_error", f"The provider answered badly ({what}): {exc}") from None
    except Exception:  # whatever else a provider's answer makes the client library raise
        log.exception("OAuth2 call %s failed", what)
        raise ProviderError("user_oauth2_provider_error", f"The provider's answer could not be used ({what}).") from None


async def _json(ctx, cfg: ProviderConfig, url: str, token: dict | None = None, *, cache: bool = False,
                fresh: bool = False) -> Any:
    """GET ``url`` as JSON (with the access token when given); ``cache`` keeps public documents
    for ``OAUTH2_METADATA_TTL`` seconds unless ``fresh``."""
    if cache and not fresh:
        hit = _documents.get(url)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
    client = _client(ctx, cfg, "client_secret_basic", token=token)
    response = await _call(ctx, client, "request", "GET", url, withhold_token=token is None,
                           headers={"Accept": "application/json"})
    if response.status_code >= 400:
        raise ProviderError("user_oauth2_provider_error",
                            f"The provider answered HTTP {response.status_code} ({url}).")
    try:
        data = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise ProviderError("user_oauth2_provider_error", f"The provider's answer is not JSON ({url}).") from None
    if cache:
        if len(_documents) > 1000:
            _documents.clear()
        _documents[url] = (data, time.monotonic() + settings.OAUTH2_METADATA_TTL)
    return data


async def metadata(ctx, cfg: ProviderConfig) -> dict:
    """The provider's endpoints: its discovery document (``oidc`` with a discovery URL)
    overlaid with the configured ones. Raises :class:`ProviderError`."""
    found: dict = {}
    if cfg.discovery_url:
        found = await _json(ctx, cfg, cfg.discovery_url, cache=True)
        if not isinstance(found, dict):
            raise ProviderError("user_oauth2_provider_error", "The discovery document is not a JSON object.")
    merged = {k: v for k, v in found.items() if isinstance(v, (str, list))}
    for key, value in (("authorization_endpoint", cfg.authorize_url), ("token_endpoint", cfg.token_url),
                       ("userinfo_endpoint", cfg.userinfo_url)):
        if value:
            merged[key] = value
    if not merged.get("authorization_endpoint") or not merged.get("token_endpoint"):
        raise ProviderError("user_oauth2_provider_error",
                            "The provider's authorization or token endpoint is unknown.")
    return merged


async def authorization_url(ctx, cfg: ProviderConfig, spec: ProviderSpec, *, redirect_uri: str, state: str,
                            scopes: list[str]) -> tuple[str, str, str]:
    """The provider URL to send the browser to; returns ``(url, code verifier, nonce)``.
    ``scopes`` are added to the provider's defaults. Raises :class:`ProviderError`."""
    meta = await metadata(ctx, cfg)
    verifier, nonce = generate_token(48), generate_token(24)
    scope = " ".join(dict.fromkeys([*spec.scopes, *scopes]))
    url = prepare_grant_uri(
        meta["authorization_endpoint"], client_id=cfg.client_id, response_type="code", redirect_uri=redirect_uri,
        scope=scope, state=state, code_challenge=create_s256_code_challenge(verifier), code_challenge_method="S256",
        nonce=nonce, **spec.authorize_params)
    return url, verifier, nonce


async def sign_in(ctx, cfg: ProviderConfig, spec: ProviderSpec, *, code: str, verifier: str, nonce: str,
                  redirect_uri: str, form: dict, iss: str = "") -> tuple[Profile, dict]:
    """Exchange ``code`` and read the user; returns ``(profile, token response)``. ``iss`` is
    the authorization response's issuer, checked against the provider's (RFC 9207).

    Raises :class:`ProviderError`: unreachable or failing provider, a refused exchange, an ID
    token that does not validate, no user ID, another issuer's response.
    """
    meta = await metadata(ctx, cfg)
    if iss and meta.get("issuer") and iss != meta["issuer"]:
        raise ProviderError("user_oauth2_bad_request", "The authorization response comes from another issuer.")
    client = _client(ctx, cfg, _auth_method(spec, meta), redirect_uri=redirect_uri)
    token = dict(await _call(ctx, client, "fetch_token", meta["token_endpoint"], code=code,
                             code_verifier=verifier, grant_type="authorization_code",
                             headers={"Accept": "application/json"}))
    if not token.get("access_token") and not token.get("id_token"):
        raise ProviderError("user_oauth2_provider_error", "The provider returned no access token.")
    claims: dict = {}
    keys = spec.id_token[1] if spec.id_token else meta.get("jwks_uri", "")
    issuers = list(spec.id_token[0]) if spec.id_token else [meta["issuer"]] if meta.get("issuer") else []
    if token.get("id_token") and keys:
        claims = await _validate_id_token(ctx, cfg, token, nonce=nonce, jwks_url=keys, issuers=issuers,
                                          algorithms=meta.get("id_token_signing_alg_values_supported"))
    elif spec.id_token:
        raise ProviderError("user_oauth2_provider_error", "The provider returned no ID token.")
    userinfo: dict = {}
    url = meta.get("userinfo_endpoint", "")
    if url and token.get("access_token"):
        found = await _json(ctx, cfg, url, token)
        userinfo = found if isinstance(found, dict) else {}
    emails: list = []
    if spec.emails_url and token.get("access_token"):
        found = await _json(ctx, cfg, spec.emails_url, token)
        emails = found if isinstance(found, list) else []
    profile = spec.profile(userinfo, claims, emails, form)
    if claims and userinfo.get("sub") and userinfo["sub"] != claims.get("sub"):
        # OpenID Connect Core §5.3.2: a user info response for another subject must be rejected.
        raise ProviderError("user_oauth2_provider_error", "The user info does not belong to the ID token's user.")
    if not profile.uid:
        raise ProviderError("user_missing_id", "Missing ID from OAuth2 provider.")
    return profile, token


def _auth_method(spec: ProviderSpec, meta: dict) -> str:
    """The provider's client authentication, or ``client_secret_post`` when its discovery
    document lists that and not ours."""
    supported = meta.get("token_endpoint_auth_methods_supported")
    if isinstance(supported, list) and supported and spec.token_auth not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return spec.token_auth


async def _validate_id_token(ctx, cfg, token: dict, *, nonce: str, jwks_url: str, issuers: list[str],
                             algorithms) -> dict:
    registry = JWSRegistry(algorithms=algorithms if isinstance(algorithms, list) and algorithms else None,
                           strict_check_header=False)
    decoded = None
    for fresh in (False, True):  # a key ID we do not know yet: the provider rotated its keys
        keyset = await _json(ctx, cfg, jwks_url, cache=True, fresh=fresh)
        try:
            decoded = jwt.decode(token["id_token"], KeySet.import_key_set(keyset), registry=registry)
            break
        except InvalidKeyIdError:
            if fresh:
                raise ProviderError("user_oauth2_provider_error",
                                    "The ID token is signed with a key the provider does not publish.") from None
        except JoseError as exc:
            raise ProviderError("user_oauth2_provider_error", f"The ID token does not validate: {exc.error}") from None
        except (ValueError, TypeError):
            raise ProviderError("user_oauth2_provider_error", "The ID token or key set is malformed.") from None
    options = {"iss": {"essential": True, "values": issuers}, "aud": {"essential": True, "values": [cfg.client_id]}}
    params = {"nonce": nonce, "client_id": cfg.client_id, "access_token": token.get("access_token")}
    claims = CodeIDToken(decoded.claims, decoded.header, options, params)
    try:
        claims.validate(leeway=ID_TOKEN_LEEWAY)
    except JoseError as exc:
        raise ProviderError("user_oauth2_provider_error", f"The ID token does not validate: {exc.error} "
                            f"({exc.description or ''})".rstrip(" ()")) from None
    return dict(claims)


def _client_secret(cfg: ProviderConfig) -> str:
    """Apple's client secret is a short-lived ES256 JWT signed with the app's ``.p8`` key
    (Sign in with Apple: "Creating a client secret"); everyone else's is the stored secret."""
    if cfg.name != "apple":
        return cfg.client_secret
    now = int(time.time())
    claims = {"iss": cfg.team_id, "iat": now, "exp": now + 300, "aud": "https://appleid.apple.com",
              "sub": cfg.client_id}
    try:
        key = ECKey.import_key(cfg.client_secret)
        return jwt.encode({"alg": "ES256", "kid": cfg.key_id}, claims, key)
    except (JoseError, ValueError, TypeError):
        raise ProviderError("user_oauth2_unauthorized", "The stored Apple key cannot sign a client secret.") from None


async def refresh(ctx, cfg: ProviderConfig, spec: ProviderSpec, refresh_token: str) -> dict:
    """New provider tokens for ``refresh_token`` (RFC 6749 §6); returns the token response
    (without a new ``refresh_token`` when the provider keeps the old one). Raises
    :class:`ProviderError`."""
    meta = await metadata(ctx, cfg)
    client = _client(ctx, cfg, _auth_method(spec, meta))
    token = dict(await _call(ctx, client, "refresh_token", meta["token_endpoint"], refresh_token=refresh_token,
                             headers={"Accept": "application/json"}))
    if not token.get("access_token"):
        raise ProviderError("user_oauth2_provider_error", "The provider returned no access token.")
    return token
