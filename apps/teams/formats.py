"""Older response formats of the team models (see ``apps.core.http.formats``), as Appwrite's response
filters shape them: below 1.9.2 (V23) a Membership has no ``userPhone``."""

from __future__ import annotations

from apps.core.http import formats


def register() -> None:
    formats.register("membership", "1.9.2", formats.drop("userPhone"), lists={"membershipList": "memberships"})
