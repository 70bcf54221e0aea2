"""Which user an OAuth2 sign-in belongs to, and its identity (Appwrite's linking rules).

- **Linking**: a signed-in user who started the sign-in gets the provider account added to
  their user, unless the provider email belongs to another user or another user's identity
  (409 ``user_already_exists``).
- **Signing in**, first match wins: the identity (provider, provider user ID); a user with the
  provider's email; a user whose identity has that email. The two email matches need the
  provider to vouch for the email (else 409 ``user_already_exists``, so nobody signs in to an
  account with an address they do not own; Appwrite answers 400 ``general_bad_request``).
  Otherwise a new user (no password, the provider's name and email, ``emailVerification`` =
  the provider's verified flag; the project's user limit applies).
- **Takeover**: a verified provider email that matches a user whose own email is still
  unverified hands that account to the provider's owner (:mod:`apps.accounts.oauth2.takeover`):
  whoever created it with that address never proved they own it, and must not keep a password,
  session or other way into the owner's account. Appwrite links such accounts as they are.
- The identity is created, or its tokens refreshed. An empty user email or name is filled from
  the provider.

Unlike Appwrite, a sign-in links to the current session's user only when that same user
started it (the state records who did): a sign-in started elsewhere and completed in a
signed-in browser cannot attach a stranger's provider account to the victim (RFC 6749 §10.12).
"""

from __future__ import annotations

from apps.accounts.oauth2.providers import Profile
from apps.accounts.oauth2.takeover import account_take_over
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import identities
from apps.core.domain.ids import unique_id
from apps.core.errors import AppwriteError


async def _other_user_has_email(ctx, email: str, user_id: int) -> bool:
    other = await selectors.user_get_by_email(ctx, project_id=ctx.project["id"], email=email)
    if other is not None and other["id"] != user_id:
        return True
    return await identities.identity_email_owner(ctx, project_id=ctx.project["id"], email=email,
                                                 not_user_id=user_id) is not None


async def _new_user(ctx, profile: Profile, email: str) -> dict:
    limit = ctx.project.get("auth_limit") or 0
    if limit:
        count = await ctx.db.fetchval("SELECT COUNT(*) FROM accounts_user WHERE project_id = %s", (ctx.project["id"],))
        if count >= limit:
            raise AppwriteError("user_count_exceeded")
    user = await services.user_create(ctx, user_uid=unique_id(), email=email, password="", name=profile.name[:128])
    if profile.verified:
        user = await services.user_update(ctx, user_id=user["id"], email_verification=True)
    return user


async def sign_in_user(ctx, *, provider: str, profile: Profile, token: dict,
                       linking_user: dict | None) -> tuple[dict, bool]:
    """``(user row, taken over)``: the user the sign-in belongs to, after saving the identity
    with the provider's ``token`` (access and refresh tokens, ``expires_in`` seconds), and
    whether the account was taken over for the provider's owner (see the module docstring).
    Run it in a transaction: a refusal raised after a takeover must undo it.

    Raises 409 ``user_already_exists`` (linking an email that is someone else's; an unverified
    provider email matching an account), 401 ``user_unauthorized`` (no email from the provider
    for a new sign-in), 400 ``general_bad_request`` (an identity with this email belongs to
    another user), 400 ``user_count_exceeded``, 403 ``user_blocked``, 404 ``user_not_found``
    (the user was deleted during the sign-in).
    """
    email = profile.email.strip().lower()
    project_id = ctx.project["id"]
    found = await identities.identity_find(ctx, project_id=project_id, provider=provider, provider_uid=profile.uid)
    by_email = False  # the user was found by their own email address
    if linking_user is not None:
        if email and await _other_user_has_email(ctx, email, linking_user["id"]):
            raise AppwriteError("user_already_exists")
        if found is not None and found["user_id"] != linking_user["id"]:
            raise AppwriteError("user_already_exists")
        user = linking_user
    else:
        user = await selectors.user_get(ctx, user_id=found["user_id"]) if found else None
        if user is None:
            if not email:
                raise AppwriteError("user_unauthorized", "OAuth provider failed to return email.")
            user = await selectors.user_get_by_email(ctx, project_id=project_id, email=email)
            by_email = user is not None
            if user is None:
                owner = await identities.identity_email_owner(ctx, project_id=project_id, email=email)
                user = await selectors.user_get(ctx, user_id=owner) if owner else None
            if user is not None and not profile.verified:
                raise AppwriteError("user_already_exists", "The provider does not vouch for this email address, "
                                    "which belongs to an existing account.")
        if user is None:
            user = await _new_user(ctx, profile, email)
    if not user["status"]:
        raise AppwriteError("user_blocked")
    taken_over = False
    if by_email and profile.verified and not user["email_verification"]:
        fresh = await account_take_over(ctx, user=user)
        taken_over = fresh is not None
        user = fresh or await selectors.user_get(ctx, user_id=user["id"])
        if user is None:  # deleted meanwhile
            raise AppwriteError("user_not_found")

    changes: dict = {}
    if not user["email"] and email:
        if await _other_user_has_email(ctx, email, user["id"]):
            raise AppwriteError("user_already_exists")
        changes["email"] = email
        changes["email_verification"] = bool(user["email_verification"]) or profile.verified
    if not user["name"] and profile.name:
        changes["name"] = profile.name[:128]
    if changes:
        user = await services.user_update(ctx, user_id=user["id"], **changes)

    if found is None and email and await identities.identity_email_owner(
            ctx, project_id=project_id, email=email, not_user_id=user["id"]) is not None:
        raise AppwriteError("general_bad_request")  # Appwrite: generic, so accounts are not revealed
    expires_in = token.get("expires_in")
    await identities.identity_save(
        ctx, user_id=user["id"], provider=provider, provider_uid=profile.uid, provider_email=email,
        access_token=str(token.get("access_token") or ""), refresh_token=str(token.get("refresh_token") or ""),
        expires_in=int(expires_in) if isinstance(expires_in, (int, float)) or str(expires_in).isdigit() else None)
    return user, taken_over
