"""Older response formats of the account models (see ``apps.core.http.formats``), as Appwrite's
response filters shape them.

* Below 1.9.0 (V21): User/Account without ``impersonator``, ``impersonatorUserId``; nor the
  1.9 email fields (``emailCanonical``, ``emailIs*``).
* Below 1.5.0 (V17): User without ``targets``, ``mfa``; Session without ``factors``,
  ``secret``; Token without ``phrase``.
"""

from __future__ import annotations

from apps.core.http import formats


def register() -> None:
    formats.register(("user", "account"), "1.9.0",
                     formats.drop("impersonator", "impersonatorUserId", "emailCanonical", "emailIsCanonical",
                                  "emailIsCorporate", "emailIsDisposable", "emailIsFree"),
                     lists={"userList": "users"})
    formats.register("user", "1.5.0", formats.drop("targets", "mfa"), lists={"userList": "users"})
    formats.register("session", "1.5.0", formats.drop("factors", "secret"), lists={"sessionList": "sessions"})
    formats.register("token", "1.5.0", formats.drop("phrase"))
