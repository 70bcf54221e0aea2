"""Input schemas of the Teams service (Appwrite's limits)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema

from apps.accounts.api.inputs import IdParam, Name
from apps.accounts.api.manage.inputs import EmailOrEmpty, PhoneOrEmpty, Search
from apps.core.domain.ids import NewId
from apps.core.http.inputs import LooseBool, Strict

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_ROLES = 100


def _key(max_length: int):
    def check(value: str) -> str:
        if not 1 <= len(value) <= max_length or not _KEY.fullmatch(value):
            raise ValueError(f"Parameter must contain at most {max_length} chars. Valid chars are a-z, A-Z, 0-9, "
                             "period, hyphen, and underscore. Can't start with a special char")
        return value
    return check


def _id_or_empty(value: str) -> str:
    return value if value == "" else _key(36)(value)


def _key_schema(max_length: int) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", "pattern": rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{max_length - 1}}}$"})


TeamRole = Annotated[str, AfterValidator(_key(36)), _key_schema(36)]
MemberRole = Annotated[str, AfterValidator(_key(81)), _key_schema(81)]
OptionalId = Annotated[str, AfterValidator(_id_or_empty),
                       WithJsonSchema({"type": "string", "pattern": r"^$|^[A-Za-z0-9][A-Za-z0-9._-]{0,35}$"})]


class TeamsList(Strict):
    queries: list[str] | None = None
    search: Search = ""
    total: LooseBool = True


class TeamCreate(Strict):
    teamId: NewId
    name: Name
    roles: Annotated[list[TeamRole], Field(max_length=MAX_ROLES)] = ["owner"]


class TeamRef(Strict):
    teamId: IdParam


class TeamUpdate(TeamRef):
    name: Name


class TeamPrefsUpdate(TeamRef):
    prefs: dict[str, Any]


class MembershipsList(TeamRef):
    queries: list[str] | None = None
    search: Search = ""
    total: LooseBool = True


class MembershipCreate(TeamRef):
    email: EmailOrEmpty = ""
    userId: OptionalId = ""
    phone: PhoneOrEmpty = ""
    roles: Annotated[list[MemberRole], Field(max_length=MAX_ROLES)]
    url: Annotated[str, StringConstraints(max_length=2048)] = ""
    name: Name = ""
    membershipId: Annotated[str, StringConstraints(max_length=36)] = ""  # SDK 27: a custom membership ID


class MembershipRef(TeamRef):
    membershipId: IdParam


class MembershipUpdate(MembershipRef):
    roles: Annotated[list[MemberRole], Field(max_length=MAX_ROLES)]


class MembershipStatusUpdate(MembershipRef):
    userId: IdParam
    secret: Annotated[str, StringConstraints(min_length=1, max_length=256)]


class UserMembershipsList(Strict):
    userId: IdParam
    queries: list[str] | None = None
    search: Search = ""
    total: LooseBool = True
