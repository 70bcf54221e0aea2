"""Input schemas of the Messaging service and the user targets (Appwrite 1.8's parameters).

Provider inputs are built from :mod:`apps.messaging.catalog`: one create and one update schema
per provider type (``from`` is a Python keyword: the field ``from_`` with the alias ``from``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, create_model

from apps.accounts.api.inputs import Email, IdParam, Name
from apps.accounts.api.manage.inputs import EmailOrEmpty, Phone, Search
from apps.core.domain.ids import NewId
from apps.core.domain.permissions import is_role
from apps.core.http.inputs import Bool, Datetime, Int, LooseBool, Strict
from apps.messaging.catalog import KINDS

Text = Annotated[str, StringConstraints(max_length=16384)]


def _role(value: str) -> str:
    if not is_role(value):
        raise ValueError(f"Role '{value}' is not valid: one of any, guests, users, users/verified, "
                         "users/unverified, user:ID, team:ID, team:ID/ROLE, member:ID, label:NAME")
    return value


Role = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_role)]
IdList = Annotated[list[IdParam], Field(max_length=100)]
Channel = Literal["email", "sms", "push"]

# The type of each provider parameter (default: text); update schemas make all of them optional.
_FIELDS: dict[str, tuple[Any, Any]] = {
    "port": (Annotated[int, Field(ge=1, le=65535)], 587),
    "isEuRegion": (Bool | None, None),
    "autoTLS": (Bool, True),
    "sandbox": (Bool, False),
    "encryption": (Literal["none", "ssl", "tls", ""], ""),
    "fromEmail": (EmailOrEmpty, ""),
    "replyToEmail": (EmailOrEmpty, ""),
    "fromName": (Annotated[str, StringConstraints(max_length=128)], ""),
    "replyToName": (Annotated[str, StringConstraints(max_length=128)], ""),
    "serviceAccountJSON": (dict[str, Any] | str, ""),
}


def _provider_schema(kind, *, create: bool):
    fields: dict[str, Any] = {}
    if create:
        fields["providerId"] = (NewId, ...)
        fields["name"] = (Name, ...)
    else:
        fields["providerId"] = (IdParam, ...)
        fields["name"] = (Name | None, None)
    for param in (*kind.credentials, *kind.options):
        typ, default = _FIELDS.get(param, (Annotated[str, StringConstraints(max_length=16384)], ""))
        if not create:
            typ, default = typ | None, None
        if param == "host" and create:
            default = ...  # Appwrite: SMTP's host is required
        key = "from_" if param == "from" else param
        fields[key] = (typ, Field(default, alias=param) if param == "from" else default)
    fields["enabled"] = (Bool | None, None)
    return create_model(f"{kind.name.title()}Provider{'Create' if create else 'Update'}", __base__=Strict, **fields)


PROVIDER_CREATE = {name: _provider_schema(kind, create=True) for name, kind in KINDS.items()}
PROVIDER_UPDATE = {name: _provider_schema(kind, create=False) for name, kind in KINDS.items()}


class ListParams(Strict):
    queries: list[str] | None = None
    search: Search = ""
    total: LooseBool = True


class ProviderRef(Strict):
    providerId: IdParam


class LogsList(Strict):
    """``queries`` takes only ``limit`` and ``offset`` (checked by the audit log's reader)."""

    queries: list[str] | None = None
    total: LooseBool = True


class ProviderLogs(ProviderRef, LogsList):
    pass


class TopicLogs(LogsList):
    topicId: IdParam


class SubscriberLogs(LogsList):
    subscriberId: IdParam


class MessageLogs(LogsList):
    messageId: IdParam


class TopicCreate(Strict):
    topicId: NewId
    name: Name
    subscribe: Annotated[list[Role], Field(max_length=100)] = ["users"]
    description: Annotated[str, StringConstraints(max_length=2048)] = ""
    qos: int | None = None  # accepted (SDK 27), not used
    expiry: int | None = None


class TopicRef(Strict):
    topicId: IdParam


class TopicUpdate(TopicRef):
    name: Name | None = None
    subscribe: Annotated[list[Role], Field(max_length=100)] | None = None
    description: Annotated[str, StringConstraints(max_length=2048)] | None = None
    qos: int | None = None
    expiry: int | None = None


class SubscribersList(TopicRef, ListParams):
    pass


class SubscriberCreate(TopicRef):
    subscriberId: NewId
    targetId: IdParam


class SubscriberRef(TopicRef):
    subscriberId: IdParam


class UserRef(Strict):
    userId: IdParam


class TargetsList(UserRef):
    queries: list[str] | None = None
    total: LooseBool = True


class TargetCreate(UserRef):
    targetId: NewId
    providerType: Channel
    identifier: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    providerId: Annotated[str, StringConstraints(max_length=36)] = ""
    name: Name = ""


class TargetRef(UserRef):
    targetId: IdParam


class TargetUpdate(TargetRef):
    identifier: Annotated[str, StringConstraints(min_length=1, max_length=2048)] | None = None
    providerId: Annotated[str, StringConstraints(max_length=36)] | None = None
    name: Name | None = None


class PushTargetCreate(Strict):
    targetId: NewId
    identifier: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    providerId: Annotated[str, StringConstraints(max_length=36)] = ""


class PushTargetRef(Strict):
    targetId: IdParam


class PushTargetUpdate(PushTargetRef):
    identifier: Annotated[str, StringConstraints(min_length=1, max_length=2048)]


class MessageRef(Strict):
    messageId: IdParam


class MessageTargetsList(MessageRef):
    queries: list[str] | None = None
    total: LooseBool = True


class _Recipients(Strict):
    topics: IdList | None = None
    users: IdList | None = None
    targets: IdList | None = None
    draft: Bool | None = None
    scheduledAt: Datetime | None = None


class EmailCreate(_Recipients):
    messageId: NewId
    subject: Annotated[str, StringConstraints(min_length=1, max_length=998)]
    content: Annotated[str, StringConstraints(min_length=1, max_length=64230)]
    cc: IdList | None = None
    bcc: IdList | None = None
    attachments: Annotated[list[str], Field(max_length=10)] | None = None
    html: Bool = False
    replyToEmail: EmailOrEmpty = ""
    replyToName: Annotated[str, StringConstraints(max_length=128)] = ""
    emails: Annotated[list[Email], Field(max_length=100)] | None = None  # raw addresses (SDK 27)


class EmailUpdate(_Recipients, MessageRef):
    subject: Annotated[str, StringConstraints(min_length=1, max_length=998)] | None = None
    content: Annotated[str, StringConstraints(min_length=1, max_length=64230)] | None = None
    cc: IdList | None = None
    bcc: IdList | None = None
    attachments: Annotated[list[str], Field(max_length=10)] | None = None
    html: Bool | None = None
    replyToEmail: EmailOrEmpty | None = None
    replyToName: Annotated[str, StringConstraints(max_length=128)] | None = None
    emails: Annotated[list[Email], Field(max_length=100)] | None = None  # raw addresses (SDK 27)


class SmsCreate(_Recipients):
    messageId: NewId
    content: Annotated[str, StringConstraints(min_length=1, max_length=64230)]


class SmsUpdate(_Recipients, MessageRef):
    content: Annotated[str, StringConstraints(min_length=1, max_length=64230)] | None = None


_PUSH = {
    "title": Annotated[str, StringConstraints(max_length=256)],
    "body": Annotated[str, StringConstraints(max_length=64230)],
    "data": dict[str, Any],
    "action": Annotated[str, StringConstraints(max_length=256)],
    "image": Annotated[str, StringConstraints(max_length=512)],
    "icon": Annotated[str, StringConstraints(max_length=256)],
    "sound": Annotated[str, StringConstraints(max_length=256)],
    "color": Annotated[str, StringConstraints(max_length=256)],
    "tag": Annotated[str, StringConstraints(max_length=256)],
    "badge": Annotated[Int, Field(ge=-1)],  # Appwrite's strict Integer: a JSON number
    "contentAvailable": Bool,
    "critical": Bool,
    "priority": Literal["normal", "high"],
    "channelId": Annotated[str, StringConstraints(max_length=256)],
}
PUSH_FIELDS = tuple(_PUSH)

PushCreate = create_model("PushCreate", __base__=_Recipients, messageId=(NewId, ...),
                          **{k: (t | None, None) for k, t in _PUSH.items()})
PushUpdate = create_model("PushUpdate", __base__=_Recipients,
                          messageId=(IdParam, ...), **{k: (t | None, None) for k, t in _PUSH.items()})


class PhoneUpdate(Strict):
    phone: Phone
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]
