"""The project's password policy, in one place for every route that sets a password (sign-up,
password change, recovery, and the Users service).

Appwrite's rules (``auths`` of the project): a minimum length (``passwordStrength.min``, at least
8), a list of common passwords (``passwordDictionary``; Django's list of 20,000 common passwords
here), no personal data (``personalDataCheck``: the user ID, email, its local part, name or phone,
case-insensitively), and not one of the last N passwords (``passwordHistory``).
"""

from __future__ import annotations

from functools import cache

from apps.core.errors import AppwriteError, invalid_argument


@cache
def _common_passwords() -> frozenset[str]:
    from django.contrib.auth.password_validation import CommonPasswordValidator

    return frozenset(CommonPasswordValidator().passwords)


def _personal(password: str, *, user_uid: str, email: str, name: str, phone: str) -> bool:
    lowered = password.lower()
    values = [user_uid, email, email.split("@", 1)[0] if email else "", name, phone, phone.lstrip("+")]
    return any(v and v.lower() in lowered for v in values)


async def password_check(ctx, password: str, *, user_uid: str = "", email: str = "", name: str = "",
                         phone: str = "", history: list[str] = (), param: str = "password") -> None:
    """Check ``password`` against ``ctx.project``'s policy for the user described by the other
    arguments (``history``: the user's stored password hashes, newest last).

    Raises 400 ``general_argument_invalid`` (too short, a common password), 400
    ``password_personal_data``, 400 ``password_recently_used``.
    """
    project = ctx.project
    minimum = max(8, project.get("auth_password_min_length") or 8)
    if len(password) < minimum:
        raise invalid_argument(param, f"Password must be between {minimum} and 256 characters long.")
    if project.get("auth_password_dictionary") and password.lower() in _common_passwords():
        raise invalid_argument(param, "Password must be at least 8 characters and should not be one of the "
                                      "commonly used password.")
    if project.get("auth_personal_data_check") and _personal(password, user_uid=user_uid, email=email,
                                                              name=name, phone=phone):
        raise AppwriteError("password_personal_data")
    keep = project.get("auth_password_history") or 0
    if keep and history:
        from apps.accounts.services.accounts import password_verify

        for encoded in list(history)[-keep:]:
            if await password_verify(ctx, password, encoded):
                raise AppwriteError("password_recently_used")


def history_after(ctx, history: list[str], new_hash: str) -> list[str]:
    """The password history to store once ``new_hash`` is the user's password: the last N
    hashes while the project keeps a history of N, else empty."""
    keep = ctx.project.get("auth_password_history") or 0
    return [*history, new_hash][-keep:] if keep else []

