"""Input schemas of the Webhooks service (Appwrite 1.9's limits)."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, StringConstraints

from apps.accounts.api.inputs import IdParam, Name
from apps.core.domain.events import event_name
from apps.core.domain.ids import NewId
from apps.core.http.inputs import Bool, LooseBool, Strict

MAX_EVENTS = 100  # Appwrite's APP_LIMIT_ARRAY_PARAMS_SIZE


_UNSENDABLE = re.compile(r"[\x00-\x20\x7f]")  # a space, a line break, a control character


def _url(value: str) -> str:
    """An http(s) URL every delivery can send: a host, a port in 1-65535 when given, and no space
    or control character anywhere (Appwrite's URL validator refuses both; stored, each made every
    delivery fail)."""
    parts = urlsplit(value)
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = 0
    if (parts.scheme not in ("http", "https") or not parts.hostname or len(value) > 2048
            or port == 0 or _UNSENDABLE.search(value)):
        raise ValueError("Value must be a valid URL with following schemes (http, https)")
    return value


Event = Annotated[str, AfterValidator(event_name)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=2048), AfterValidator(_url)]
Text256 = Annotated[str, StringConstraints(max_length=256)]
Secret = Annotated[str, StringConstraints(min_length=8, max_length=256)]
Events = Annotated[list[Event], Field(max_length=MAX_EVENTS)]


class WebhookList(Strict):
    queries: list[str] | None = None
    total: LooseBool = True


class WebhookRef(Strict):
    webhookId: IdParam


class WebhookUpdate(WebhookRef):
    name: Name
    url: Url
    events: Events
    enabled: Bool = True
    tls: Bool = False
    authUsername: Text256 = ""
    authPassword: Text256 = ""
    description: Text256 = ""


class WebhookCreate(Strict):
    webhookId: NewId
    url: Url
    name: Name
    events: Events
    enabled: Bool = True
    tls: Bool = False
    authUsername: Text256 = ""
    authPassword: Text256 = ""
    secret: Secret | None = None
    description: Text256 = ""


class WebhookSecretUpdate(WebhookRef):
    secret: Secret | None = None
