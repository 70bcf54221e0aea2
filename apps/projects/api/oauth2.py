"""OAuth2 providers of the caller's project: ``/v1/project/oauth2`` (scopes
``project.oauth2.read``/``project.oauth2.write``), over the accounts app's
:class:`apps.accounts.models.OAuthProvider` rows (the same the admin edits).

Each provider takes Appwrite 1.9's parameter names (:data:`PARAMS`: e.g. GitLab's
``applicationId``/``secret``/``endpoint``, Apple's ``serviceId``/``keyId``/``teamId``/``p8File``)
and answers Appwrite's ``OAuth2<Provider>`` model. Secrets are stored encrypted and never shown
back (``""``). ``prompt`` is accepted and not stored (this server sends each provider's own
default); native sign-in (``nativeEnabled``) is not supported. Providers of Appwrite's this
server does not implement answer 400 ``project_provider_unsupported``.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, create_model

from apps.core.errors import AppwriteError
from apps.core.http.context import json_response
from apps.core.http.inputs import Bool, Strict
from apps.projects.api.common import orm

_CLIENT = {"clientId": "client_id", "clientSecret": "@secret"}
# provider -> Appwrite parameter -> OAuthProvider field ("@secret": the encrypted secret)
PARAMS: dict[str, dict[str, str]] = {
    "github": _CLIENT, "google": _CLIENT, "discord": _CLIENT,
    "gitlab": {"applicationId": "client_id", "secret": "@secret", "endpoint": "base_url"},
    "microsoft": {"applicationId": "client_id", "applicationSecret": "@secret", "tenant": "tenant"},
    "apple": {"serviceId": "client_id", "keyId": "key_id", "teamId": "team_id", "p8File": "@secret"},
    "oidc": {**_CLIENT, "wellKnownURL": "discovery_url", "authorizationURL": "authorization_url",
             "tokenURL": "token_url", "userInfoURL": "userinfo_url"},
}
_PROMPT = frozenset({"github", "google", "discord", "microsoft", "oidc"})
_NATIVE = frozenset({"google", "apple"})


def provider_model(provider: str, row) -> dict:
    out: dict[str, Any] = {"$id": provider, "enabled": bool(row.enabled) if row is not None else False}
    for param, column in PARAMS[provider].items():
        out[param] = "" if column == "@secret" or row is None else (getattr(row, column) or "")
    if provider in _PROMPT:
        out["prompt"] = []
    if provider in _NATIVE:
        out.update(nativeEnabled=False, nativeClientIds=[])
    return out


def _input(provider: str) -> type[Strict]:
    fields: dict[str, Any] = {param: (str | None, None) for param in PARAMS[provider]}
    fields["enabled"] = (Bool | None, None)
    if provider in _PROMPT:
        fields["prompt"] = (list[str] | None, None)
    if provider in _NATIVE:
        fields.update(nativeEnabled=(Bool | None, None), nativeClientIds=(list[str] | None, None))
    return create_model(f"OAuth2{provider.capitalize()}Update", __base__=Strict, **fields)


INPUTS = {provider: _input(provider) for provider in PARAMS}


class ProviderRef(Strict):
    provider: str


class ProviderAny(ProviderRef):
    """Any body: a provider this server does not implement is refused as such, whatever it sends."""

    model_config = ConfigDict(extra="allow")


def _rows(project_pk: int) -> dict:
    from apps.accounts.models import OAuthProvider

    return {row.provider: row for row in OAuthProvider.objects.filter(project_id=project_pk)}


async def providers_list(ctx):
    rows = await orm(ctx, _rows, ctx.project["id"])
    found = [provider_model(name, rows.get(name)) for name in PARAMS]
    return json_response({"total": len(found) if ctx.params.total else 0, "providers": found})


async def provider_get(ctx):
    provider = ctx.params.provider
    if provider not in PARAMS:
        raise AppwriteError("project_provider_unsupported")
    rows = await orm(ctx, _rows, ctx.project["id"])
    return json_response(provider_model(provider, rows.get(provider)))


async def provider_unsupported(ctx):
    raise AppwriteError("project_provider_unsupported")


def updater(provider: str):
    """The ``PATCH /project/oauth2/<provider>`` handler."""
    async def update(ctx):
        p = ctx.params
        if getattr(p, "nativeEnabled", None):
            raise AppwriteError("general_feature_unsupported", "Native sign-in is not supported by this server.")

        def run():
            from apps.accounts.models import OAuthProvider

            row, _ = OAuthProvider.objects.get_or_create(project_id=ctx.project["id"], provider=provider)
            for param, column in PARAMS[provider].items():
                value = getattr(p, param)
                if value is None:
                    continue
                if column == "@secret":
                    row.set_client_secret(value)
                else:
                    setattr(row, column, value)
            if p.enabled is not None:
                row.enabled = p.enabled
            row.full_clean(exclude=["project", "client_secret"])
            row.save()
            return row

        from django.core.exceptions import ValidationError

        try:
            row = await orm(ctx, run)
        except ValidationError as exc:
            raise AppwriteError("general_argument_invalid", f"Invalid OAuth2 settings: {exc.messages[0]}") from None
        return json_response(provider_model(provider, row))

    update.__name__ = f"oauth2_update_{provider}"
    return update
