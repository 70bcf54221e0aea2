"""Identity endpoints: the signed-in user's linked provider accounts (``/account/identities``)
and the Users service's view of all of them (``/users/identities``, API keys)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from apps.accounts.api.inputs import IdParam
from apps.accounts.services import identities
from apps.core.http.context import json_response, no_content
from apps.core.http.inputs import LooseBool, Strict


class IdentitiesList(Strict):
    queries: list[str] | None = None
    total: LooseBool = True


class UsersIdentitiesList(IdentitiesList):
    search: Annotated[str, StringConstraints(max_length=256)] = ""


class IdentityRef(Strict):
    identityId: IdParam


async def account_identities_list(ctx):
    """``GET /account/identities``: 200 ``{total, identities}`` of the caller."""
    p = ctx.params
    rows, total = await identities.identity_list(ctx, project_id=ctx.project["id"], queries=p.queries,
                                                 user_id=ctx.auth.user["id"], total=p.total)
    own = ctx.auth.impersonator is None
    return json_response({"total": total, "identities": [identities.identity_model(r, provider_tokens=own)
                                                         for r in rows]})


async def account_identity_delete(ctx):
    """``DELETE /account/identities/{identityId}``: 204; 404 ``user_identity_not_found`` for an
    identity that is not the caller's."""
    await identities.identity_delete(ctx, project_id=ctx.project["id"], identity_uid=ctx.params.identityId,
                                     user_id=ctx.auth.user["id"])
    return no_content()


async def users_identities_list(ctx):
    """``GET /users/identities``: 200 ``{total, identities}`` of the whole project."""
    p = ctx.params
    rows, total = await identities.identity_list(ctx, project_id=ctx.project["id"], queries=p.queries,
                                                 search=p.search, total=p.total)
    return json_response({"total": total, "identities": [identities.identity_model(r, provider_tokens=ctx.auth.is_key)
                                                         for r in rows]})


async def users_identity_delete(ctx):
    """``DELETE /users/identities/{identityId}``: 204; 404 ``user_identity_not_found``."""
    await identities.identity_delete(ctx, project_id=ctx.project["id"], identity_uid=ctx.params.identityId)
    return no_content()
