"""The Avatars routes: scope ``avatars.read`` (guests, users and keys hold it)."""

from typing import Any

from apps.avatars import api
from apps.core.http.endpoint import Endpoint

_S: dict[str, Any] = {"scope": "avatars.read", "response": "any"}

endpoints = [
    Endpoint("GET", "/avatars/browsers/{code}", api.get_browser, "avatars.getBrowser", input=api.IconParams, **_S),
    Endpoint("GET", "/avatars/credit-cards/{code}", api.get_credit_card, "avatars.getCreditCard",
             input=api.IconParams, **_S),
    Endpoint("GET", "/avatars/flags/{code}", api.get_flag, "avatars.getFlag", input=api.IconParams, **_S),
    Endpoint("GET", "/avatars/image", api.get_image, "avatars.getImage", input=api.ImageParams, **_S),
    Endpoint("GET", "/avatars/favicon", api.get_favicon, "avatars.getFavicon", input=api.FaviconParams, **_S),
    Endpoint("GET", "/avatars/screenshots", api.get_screenshot, "avatars.getScreenshot",
             input=api.ScreenshotParams, **_S),
    Endpoint("GET", "/avatars/initials", api.get_initials, "avatars.getInitials", input=api.InitialsParams, **_S),
    Endpoint("GET", "/avatars/qr", api.get_qr, "avatars.getQR", input=api.QrParams, **_S),
]
