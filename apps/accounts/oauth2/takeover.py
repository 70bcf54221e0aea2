"""Handing an unverified account to the owner of its email (OAuth2 pre-account takeover).

Anyone may create an email + password account with an address they do not own; it stays
unverified. When the address's real owner later signs in with an OAuth2 provider that vouches
for it (the provider's "email verified" flag), the sign-in lands in that account. Left as it
was, whoever created the account would keep signing in with their password and share the
owner's account. So the sign-in takes the account over for the provider's owner: every
credential and way back in that the account had before is removed, and the email counts as
verified from then on (the provider proved it). See ``docs/security-oauth2.md``.

Removed: the password (and its history; email + password sign-in then answers 401
``user_invalid_credentials``), every session (and so every JWT made from one), every token
(recovery, verification, magic URL, email and phone codes, OAuth2 hand-offs), pending MFA
challenges, the MFA authenticator, its recovery codes and the MFA requirement, the phone number
(phone sign-in sends its code there), and every identity (another provider account linked to
the user signs in to it). Kept: the user ID, name, email, preferences, labels, team
memberships and the data the user owns.
"""

from __future__ import annotations

from apps.accounts.selectors import accounts as selectors
from apps.core.drivers.db import now

# Rows through which someone signs in, or proves a factor, as the user.
_CREDENTIAL_TABLES = ("accounts_session", "accounts_token", "accounts_challenge", "accounts_identity")

AUDIT_EVENT = "user.takeover"  # the audit log's name for it (GET /account/logs, /users/{id}/logs)


async def account_take_over(ctx, *, user: dict) -> dict | None:
    """Strip ``user`` (a user row whose email is unverified) of every earlier credential and mark
    its email verified; returns the fresh user row, or ``None`` when the email was verified
    meanwhile (a concurrent sign-in took the account over first, or the owner confirmed the
    address): then nothing is changed. Run it in the sign-in's transaction, before the new
    identity and session are written; after the commit the caller drops the user's cached
    sessions (``apps.core.drivers.cache.invalidate`` with ``selectors.user_tag``).
    """
    db = ctx.db
    # The user row first, and only while still unverified: the row lock makes a concurrent
    # takeover of the same account wait for this one's commit, then find nothing to do.
    changed = await db.execute(
        "UPDATE accounts_user SET password = '', password_update = NULL, password_history = %s, "
        "email_verification = %s, phone = '', phone_verification = %s, mfa = %s, mfa_totp_secret = '', "
        "mfa_totp_verified = %s, mfa_recovery_codes = %s, updated_at = %s WHERE id = %s AND email_verification = %s",
        (db.json([]), True, False, False, False, db.json([]), db.dt(now()), user["id"], False))
    if not changed:
        return None
    for table in _CREDENTIAL_TABLES:
        await db.execute(f"DELETE FROM {table} WHERE user_id = %s", (user["id"],))
    return await selectors.user_get(ctx, user_id=user["id"])
