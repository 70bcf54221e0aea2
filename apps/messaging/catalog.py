"""The provider types of Appwrite's Messaging service and where each parameter is stored.

Per type: its channel, the parameters kept in ``credentials`` (encrypted) and in ``options``
(plain), which credentials are secret (never in a response), and what an enabled provider needs
(Appwrite's rule: ``enabled: true`` sticks only when these are set; on create it silently stays
off, on update it answers 400 ``provider_missing_credentials``).
"""

from __future__ import annotations

from dataclasses import dataclass

EMAIL_OPTIONS = ("fromName", "fromEmail", "replyToName", "replyToEmail")


@dataclass(frozen=True)
class Kind:
    name: str
    channel: str  # email, sms, push
    credentials: tuple[str, ...]
    options: tuple[str, ...]
    secrets: tuple[str, ...]
    required: tuple[str, ...]  # credentials or options an enabled provider needs


KINDS = {k.name: k for k in (
    Kind("smtp", "email", ("host", "port", "username", "password"),
         (*EMAIL_OPTIONS, "encryption", "autoTLS", "mailer"), ("password",), ("host", "fromEmail")),
    Kind("mailgun", "email", ("apiKey", "domain", "isEuRegion"), EMAIL_OPTIONS, ("apiKey",),
         ("apiKey", "domain", "isEuRegion", "fromEmail")),
    Kind("sendgrid", "email", ("apiKey",), EMAIL_OPTIONS, ("apiKey",), ("apiKey", "fromEmail")),
    Kind("resend", "email", ("apiKey",), EMAIL_OPTIONS, ("apiKey",), ("apiKey", "fromEmail")),
    Kind("ses", "email", ("accessKey", "secretKey", "region"), EMAIL_OPTIONS, ("secretKey",),
         ("accessKey", "secretKey", "region", "fromEmail")),
    Kind("twilio", "sms", ("accountSid", "authToken"), ("from",), ("authToken",), ("accountSid", "authToken", "from")),
    Kind("vonage", "sms", ("apiKey", "apiSecret"), ("from",), ("apiSecret",), ("apiKey", "apiSecret", "from")),
    Kind("msg91", "sms", ("templateId", "senderId", "authKey"), (), ("authKey",), ("templateId", "senderId", "authKey")),
    Kind("telesign", "sms", ("customerId", "apiKey"), ("from",), ("apiKey",), ("customerId", "apiKey", "from")),
    Kind("textmagic", "sms", ("username", "apiKey"), ("from",), ("apiKey",), ("username", "apiKey", "from")),
    Kind("fcm", "push", ("serviceAccountJSON",), (), ("serviceAccountJSON",), ("serviceAccountJSON",)),
    Kind("apns", "push", ("authKey", "authKeyId", "teamId", "bundleId"), ("sandbox",), ("authKey",),
         ("authKey", "authKeyId", "teamId", "bundleId")),
)}

CHANNELS = ("email", "sms", "push")


def missing(kind: Kind, credentials: dict, options: dict) -> list[str]:
    """The parameters an enabled provider of ``kind`` still lacks."""
    out = []
    for name in kind.required:
        value = credentials.get(name) if name in kind.credentials else options.get(name)
        if value is None or value == "" or value == {}:
            out.append(name)
    return out


def public_credentials(kind: Kind, credentials: dict) -> dict:
    """The credentials a response may show: all but the secret ones."""
    return {k: v for k, v in credentials.items() if k not in kind.secrets}
