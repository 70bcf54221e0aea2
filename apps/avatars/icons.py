"""The icon sets behind ``/avatars/browsers``, ``/credit-cards`` and ``/flags``.

The codes each route accepts are Appwrite's (the SDKs' ``Browser``, ``CreditCard`` and ``Flag``
enums); the images come from npm packages installed into ``AVATARS_ICONS_DIR`` (``npm ci`` in
``apps/avatars/assets``): alrra's ``@browser-logos`` (MIT), ``payment-icons`` (MPL-2.0) and
``flag-icons`` (MIT). A code the installed sets have no image for answers 404
``avatar_not_found`` (README "Avatars" lists them).
"""

from __future__ import annotations

import os
from functools import cache

from django.conf import settings

# Appwrite's browser codes (Matomo device-detector's) -> the @browser-logos package.
BROWSERS = {
    "aa": None, "an": None, "ch": "chrome", "ci": "chrome", "cm": "chrome", "cr": "chromium",
    "ff": "firefox", "sf": "safari", "mf": "safari", "ps": "edge", "oi": "edge", "om": "opera",
    "op": "opera", "on": "opera",
}
# Appwrite's credit card codes -> the payment-icons file (flat style).
CREDIT_CARDS = {
    "amex": "amex", "argencard": None, "cabal": None, "cencosud": None, "diners": "diners",
    "discover": "discover", "elo": "elo", "hipercard": "hipercard", "jcb": "jcb",
    "mastercard": "mastercard", "naranja": None, "targeta-shopping": None, "unionpay": "unionpay",
    "visa": "visa", "mir": None, "maestro": "maestro", "rupay": None,
}


@cache
def flag_codes() -> frozenset[str]:
    """ISO 3166-1 alpha-2 codes (lower-case), as Appwrite's flags accept."""
    import pycountry

    return frozenset(c.alpha_2.lower() for c in pycountry.countries)


def icon_path(kind: str, code: str) -> str | None:
    """The file of ``code`` in set ``kind`` (``browsers``, ``credit-cards``, ``flags``), or
    ``None`` when the installed sets have none. ``code`` must be a valid code of ``kind``."""
    root = settings.AVATARS_ICONS_DIR
    if kind == "browsers":
        name = BROWSERS[code]
        path = os.path.join(root, "@browser-logos", name, f"{name}_512x512.png") if name else None
    elif kind == "credit-cards":
        name = CREDIT_CARDS[code]
        path = os.path.join(root, "payment-icons", "svg", "flat", f"{name}.svg") if name else None
    else:
        path = os.path.join(root, "flag-icons", "flags", "4x3", f"{code}.svg")
    return path if path and os.path.isfile(path) else None


_PACKAGES = {"browsers": "@browser-logos", "credit-cards": "payment-icons", "flags": "flag-icons"}


def installed(kind: str) -> bool:
    """Whether the npm package of set ``kind`` is in ``AVATARS_ICONS_DIR`` at all (a server
    started without ``npm ci`` in ``apps/avatars/assets`` has none of them)."""
    return os.path.isdir(os.path.join(settings.AVATARS_ICONS_DIR, _PACKAGES[kind]))


def codes(kind: str) -> frozenset[str] | dict:
    return {"browsers": BROWSERS, "credit-cards": CREDIT_CARDS}.get(kind) or flag_codes()
