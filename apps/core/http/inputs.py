"""The shared base of the /v1 input models, their boolean parameter types and the date type.

Every endpoint's input model derives from :class:`Strict`, and every boolean request parameter is
typed :data:`Bool` or :data:`LooseBool`, never plain ``bool``: pydantic's own ``bool`` is lax and
takes ``"off"``, ``"no"``, ``"yes"``, ``"on"``, ``"t"``, ``"f"``, ``"y"``, ``"n"`` (any case) and
``0``/``1``, so ``{"enabled": "off"}`` would switch a service off.

**The rule, and where it comes from.** Appwrite checks a boolean parameter with utopia-php's
``Boolean`` validator: it passes a real boolean and nothing else; in its *loose* mode
(``new Boolean(true)``) it also passes the strings ``"true"``, ``"false"``, ``"1"``, ``"0"``
and the integers ``1`` and ``0``, compared exactly (no other case, no spaces, not ``1.0``).
Appwrite chooses the mode per parameter: loose for the parameters that travel as strings (every
list's ``total``, the avatars' ``download``, ``fullpage`` and ``touch`` query parameters, the
multipart ``activate`` of a function deployment) and for a few JSON ones (a bucket's
``fileSecurity``, ``enabled``, ``encryption``, ``antivirus`` and ``transformations``, a
collection's or table's ``documentSecurity``/``rowSecurity`` and ``purge``, an execution's
``async``, a user's ``status``); strict for all the others. So here:

- :data:`LooseBool` (those parameters): loose wherever the value comes from;
- :data:`Bool` (every other one): a real JSON boolean in a JSON body; loose when the value came
  from the query string or an urlencoded or multipart body, whose values can only be strings
  (:func:`apps.core.http.params.collect` reports those names, :func:`~apps.core.http.params.validate`
  passes the ones naming ``Bool`` fields as the validation context). Appwrite would refuse even
  ``"true"`` there for a strict parameter, leaving it unusable from a form; accepting exactly the
  loose values is the one place this server is more lenient, and still refuses anything else.

Anything refused is 400 ``general_argument_invalid``: ``Invalid `enabled` param: Value must be a
valid boolean``. The other way round, a boolean where a number is expected (``{"port": true}``,
which pydantic's lax int reads as 1) is refused too: ``Value must be a valid integer`` (a top-level
``int`` or ``float`` field; :func:`apps.core.http.params.validate`), as Appwrite's Integer and Float
validators refuse it. The JSON schema of both types is ``{"type": "boolean"}`` (the OpenAPI document).
Only boolean fields run this Python code; no other field pays for it.

**Numbers.** Appwrite has two kinds of number validator. ``Integer`` and ``FloatValidator`` are
strict unless declared loose (``new Integer(true)``): a JSON ``"25"`` is refused, a query-string
``25`` (text) only passes loose ones. ``Range`` (and ``Numeric``) pass any numeric value, ``"25"``
included, wherever it comes from. Pydantic's ``int``/``float`` behave like ``Range``, so a field
Appwrite declares with ``Range`` stays plain ``int``/``float`` (with its bounds); a field it declares
with a strict ``Integer``/``FloatValidator`` (the SMTP ``port``, an attribute's ``min``/``max``/
``default``, scrypt's cost parameters) is typed :data:`Int`/:data:`Float`: in a JSON body only a
JSON number (an integer for :data:`Int`), loose when the value came as text, as for :data:`Bool`.
The check runs in :func:`apps.core.http.params.validate`, in the loop that already looks at the
top-level number fields for booleans; no other field pays for it.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainValidator, ValidationInfo
from pydantic_core import PydanticCustomError

_LOOSE: dict[tuple[type, Any], bool] = {
    (str, "true"): True, (str, "false"): False, (str, "1"): True, (str, "0"): False,
    (int, 1): True, (int, 0): False,
}


def loose_boolean(value: Any) -> bool | None:
    """``value`` as a boolean under the loose rule, or ``None`` when the rule refuses it."""
    if value is True or value is False:
        return value
    kind = type(value)
    if kind is not str and kind is not int:  # exact types: not 1.0, not a str subclass
        return None
    return _LOOSE.get((kind, value))


def _refused() -> PydanticCustomError:
    return PydanticCustomError("bool_type", "Value must be a valid boolean")


def _strict(value: Any, info: ValidationInfo) -> bool:
    if value is True or value is False:
        return value
    if info.context is not None and info.field_name in info.context:  # came as text (see the module doc)
        found = loose_boolean(value)
        if found is not None:
            return found
    raise _refused()


def _loose(value: Any) -> bool:
    found = loose_boolean(value)
    if found is None:
        raise _refused()
    return found


STRICT_BOOL = PlainValidator(_strict, json_schema_input_type=bool)
Bool = Annotated[bool, STRICT_BOOL]
LooseBool = Annotated[bool, PlainValidator(_loose, json_schema_input_type=bool)]


class _StrictNumber:
    """Marks a number field whose value must be a JSON number in a JSON body (see the module doc);
    pydantic ignores it, :func:`apps.core.http.params.number_fields` reads it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "STRICT_NUMBER"


STRICT_NUMBER = _StrictNumber()
Int = Annotated[int, STRICT_NUMBER]
Float = Annotated[float, STRICT_NUMBER]


def _storable(value: dt.datetime) -> dt.datetime:
    """A date whose UTC time is inside years 1-9999 (no offset: UTC). Python parses
    ``9999-12-31T23:59:59-12:00``, whose UTC time is in year 10000: PostgreSQL would store it,
    and no driver could read the row back."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    try:
        value.astimezone(dt.UTC)
    except OverflowError:
        raise ValueError("Value must be a valid date between 0001-01-01 and 9999-12-31 (UTC).") from None
    return value


# Every date request parameter: ISO 8601 (or what pydantic's datetime takes), aware, storable.
Datetime = Annotated[dt.datetime, AfterValidator(_storable)]


class Strict(BaseModel):
    """Base of every /v1 input model: parameters it does not declare are ignored, as Appwrite does
    (``extra="forbid"`` marks the model for :func:`apps.core.http.params.declared_only`, which drops
    them before validation); a field with an alias is accepted under its own name too."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
