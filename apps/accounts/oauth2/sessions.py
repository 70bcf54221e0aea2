"""Refreshing an OAuth2 session's provider tokens (``PATCH /account/sessions/{id}``).

Appwrite: when the session holds a provider refresh token, extending the session also asks the
provider for fresh tokens and stores them with their new expiry.
"""

from __future__ import annotations

import datetime as dt

from apps.accounts.oauth2 import client, crypto
from apps.accounts.oauth2.config import provider_config_get
from apps.accounts.oauth2.providers import SPECS
from apps.core.drivers.db import now
from apps.core.errors import AppwriteError


async def session_refresh_provider_tokens(ctx, *, session: dict) -> None:
    """Refresh the provider tokens of ``session`` (a session row) when it has a refresh token.

    Raises 400 ``project_provider_unsupported``, 412 ``project_provider_disabled``, and the
    provider's refusal or failure as ``user_oauth2_bad_request``/``user_oauth2_unauthorized``/
    ``user_oauth2_provider_error``; the session is left as it was.
    """
    try:
        refresh_token = crypto.decrypt(session.get("provider_refresh_token") or "")
    except crypto.SecretUnreadable:
        refresh_token = ""
    if not refresh_token:
        return
    spec = SPECS.get(session["provider"])
    if spec is None:
        raise AppwriteError("project_provider_unsupported")
    cfg = await provider_config_get(ctx, session["provider"])
    try:
        token = await client.refresh(ctx, cfg, spec, refresh_token)
    except client.ProviderError as err:
        raise AppwriteError(err.type, err.message) from None
    expires_in = token.get("expires_in")
    stamp = now()
    expiry = (ctx.db.dt(stamp + dt.timedelta(seconds=int(expires_in)))
              if isinstance(expires_in, int) or str(expires_in).isdigit() else None)
    await ctx.db.execute(
        "UPDATE accounts_session SET provider_access_token = %s, provider_refresh_token = %s, "
        "provider_access_token_expiry = %s WHERE id = %s",
        (crypto.encrypt(str(token["access_token"])), crypto.encrypt(str(token.get("refresh_token") or refresh_token)),
         expiry, session["id"]))
