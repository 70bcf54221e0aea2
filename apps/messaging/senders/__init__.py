"""Clients of the providers' APIs, used by the worker (:mod:`apps.messaging.tasks`).

A sender is made from a provider's kind, decrypted credentials and options; ``send(identifier,
data)`` delivers one message to one recipient or raises :class:`DeliveryError` with the reason
(the provider's own error text when it gave one). ``expired`` on the error marks a push token the
provider reported gone (FCM ``UNREGISTERED``, APNs 410): the target is then marked expired.
Network failures and timeouts are delivery errors too; nothing here raises anything else for a
bad answer.
"""

from __future__ import annotations

from django.conf import settings

DEFAULT_ENDPOINTS = {
    "twilio": "https://api.twilio.com",
    "vonage": "https://rest.nexmo.com",
    "msg91": "https://control.msg91.com",
    "telesign": "https://rest-api.telesign.com",
    "textmagic": "https://rest.textmagic.com",
    "mailgun": "https://api.mailgun.net",
    "mailgun-eu": "https://api.eu.mailgun.net",
    "sendgrid": "https://api.sendgrid.com",
    "resend": "https://api.resend.com",
    "ses": "",  # boto3's regional endpoint (https://email.<region>.amazonaws.com)
    "fcm": "https://fcm.googleapis.com",
    "apns": "https://api.push.apple.com",
    "apns-sandbox": "https://api.sandbox.push.apple.com",
}


class DeliveryError(Exception):
    """One recipient could not be reached; ``str()`` is the reason recorded on the message."""

    def __init__(self, reason: str, *, expired: bool = False):
        super().__init__(reason)
        self.expired = expired


def endpoint(name: str) -> str:
    """The base URL of provider API ``name``: ``MESSAGING_ENDPOINTS`` (``name=url,...``) or
    the provider's public host."""
    for item in settings.MESSAGING_ENDPOINTS.split(","):
        key, _, url = item.strip().partition("=")
        if key.strip() == name and url.strip():
            return url.strip().rstrip("/")
    return DEFAULT_ENDPOINTS[name]


def answer_error(response, *keys: str) -> str:
    """A readable reason from an HTTP error answer: the first of ``keys`` (dotted paths) found
    in its JSON body, else the start of its text; prefixed with the status."""
    text = ""
    try:
        body = response.json()
    except ValueError:
        body = None
    for key in keys:
        value = body
        for part in key.split("."):
            if isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            elif isinstance(value, dict):
                value = value.get(part)
            else:
                value = None
        if value not in (None, ""):
            text = str(value)
            break
    if not text:
        text = (response.text or "").strip()[:300]
    return f"HTTP {response.status_code}: {text}" if text else f"HTTP {response.status_code}"


def make_sender(kind: str, credentials: dict, options: dict):
    """The sender for a provider of ``kind``."""
    from apps.messaging.senders import email, push, sms

    for module in (email, sms, push):
        cls = module.SENDERS.get(kind)
        if cls is not None:
            return cls(credentials, options)
    raise DeliveryError(f"provider type {kind} cannot send")


class HttpSender:
    """Base of the HTTP API senders: one ``httpx2`` client per send run."""

    http2 = False

    def __init__(self, credentials: dict, options: dict):
        import httpx2

        self.credentials = credentials
        self.options = options
        self.client = httpx2.Client(timeout=settings.MESSAGING_TIMEOUT, http2=self.http2,
                                    http1=not self.http2 or not self.cleartext_h2())

    def cleartext_h2(self) -> bool:
        return False

    def post(self, url: str, **kw):
        import httpx2

        try:
            return self.client.post(url, **kw)
        except httpx2.HTTPError as exc:
            raise DeliveryError(f"{type(exc).__name__}: {exc or 'no answer'}") from exc

    def close(self) -> None:
        self.client.close()
