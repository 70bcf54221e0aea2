"""Column kinds: their create/update parameters, spec checks, and row value validation.

A column is stored as ``kind`` (the create route's kind) plus ``required``, ``array``, ``size``
and ``spec`` (``min``, ``max``, ``default``, ``elements``, ``encrypt``). Wire types follow
Appwrite's: ``float`` is reported as ``double``; ``email``/``url``/``ip``/``enum`` are
``string`` with a ``format``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from apps.core.errors import AppwriteError, invalid_argument

MAX_COLUMNS = 1000  # columns of one table (relationship columns on both sides included)
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
FLOAT_MAX = 1.7976931348623157e308
KEY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,35}")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    type: str  # wire type
    format: str = ""
    base: str = "string"  # value family: string, integer, float, boolean, datetime
    params: tuple[str, ...] = ()  # kind-specific create params besides key/required/default/array
    fixed_size: int | None = None


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("string", "string", params=("size", "encrypt")),
    Kind("varchar", "varchar", params=("size", "encrypt")),
    Kind("text", "text", params=("encrypt",), fixed_size=65535),
    Kind("mediumtext", "mediumtext", params=("encrypt",), fixed_size=16777215),
    Kind("longtext", "longtext", params=("encrypt",), fixed_size=4294967295),
    Kind("integer", "integer", base="integer", params=("min", "max")),
    Kind("bigint", "bigint", base="integer", params=("min", "max")),
    Kind("float", "double", base="float", params=("min", "max")),
    Kind("boolean", "boolean", base="boolean"),
    Kind("datetime", "datetime", "datetime", base="datetime"),
    Kind("email", "string", "email", fixed_size=254),
    Kind("url", "string", "url", fixed_size=2000),
    Kind("ip", "string", "ip", fixed_size=39),
    Kind("enum", "string", "enum", params=("elements",)),
    # Spatial (``apps.databases.spatial``): PostgreSQL with PostGIS only; no arrays.
    Kind("point", "point", base="spatial"),
    Kind("line", "linestring", base="spatial"),
    Kind("polygon", "polygon", base="spatial"),
    # Created by its own route (``relations.schema``); its values are links, not data.
    Kind("relationship", "relationship", base="relationship"),
)}
PLAIN_KINDS = tuple(k for k in KINDS if k != "relationship")  # kinds with the generic create/update routes
MAX_SIZE = {"string": 1_073_741_824, "varchar": 16381}
STRING_BASES = ("string",)


def check_key(key: str, param: str = "key") -> str:
    """A valid column/index key: 1-36 of ``[A-Za-z0-9_.-]``, not starting with a special char
    (Appwrite Key validator). Keys are later written into SQL as literals, so this check is
    what keeps that safe. Raises 400 ``general_argument_invalid``."""
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise invalid_argument(param, "Parameter must contain at most 36 chars. Valid chars are a-z, A-Z, 0-9, "
                                      "period, hyphen, and underscore. Can't start with a special char")
    return key


def column_from_row(c: dict) -> dict:
    """Normalise a column row (from SQL or json_agg) into a plain dict."""
    from apps.core.drivers.db import as_bool, as_json

    return {
        "id": c["id"], "key": c["key"], "kind": c["kind"], "required": as_bool(c["required"]),
        "array": as_bool(c["array"]), "size": c.get("size"), "spec": as_json(c.get("spec")) or {},
        "created_at": c["created_at"], "updated_at": c["updated_at"],
    }


# --- creating and updating columns -------------------------------------------------------------

def _number(kind: Kind, value: Any, name: str) -> int | float:
    if kind.base == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or not INT_MIN <= value <= INT_MAX:
            raise invalid_argument(name, "Value must be a valid integer")
        return value
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise invalid_argument(name, "Value must be a valid float")
    return float(value)


def build_spec(kind_name: str, params: dict, *, existing: dict | None = None) -> tuple[int | None, dict]:
    """``(size, spec)`` for a column of ``kind_name`` from create/update ``params`` (only the
    keys that were sent). ``existing`` is the stored column on update.

    Raises 400 ``general_argument_invalid`` for bad sizes/bounds/elements,
    ``attribute_default_unsupported`` for a default on a required or array column and
    ``attribute_value_invalid`` for a default outside the column's rules.
    """
    kind = KINDS[kind_name]
    spec = dict(existing["spec"]) if existing else {}
    size = existing["size"] if existing else kind.fixed_size
    if "size" in kind.params and params.get("size") is not None:
        size = params["size"]
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_SIZE[kind_name]:
            raise invalid_argument("size", f"Value must be a valid range between 1 and {MAX_SIZE[kind_name]:,}")
    elif "size" in kind.params and existing is None:
        raise AppwriteError("general_argument_invalid", 'Param "size" is not optional.')
    if kind.base in ("integer", "float"):
        for bound in ("min", "max"):
            if params.get(bound) is not None:
                spec[bound] = _number(kind, params[bound], bound)
        lo = spec.get("min", INT_MIN if kind.base == "integer" else -FLOAT_MAX)
        hi = spec.get("max", INT_MAX if kind.base == "integer" else FLOAT_MAX)
        if lo > hi:
            raise AppwriteError("attribute_value_invalid", "Minimum value must be lesser than maximum value")
    if kind_name == "enum" and params.get("elements") is not None:
        elements = params["elements"]
        if (not isinstance(elements, list) or not 1 <= len(elements) <= 1024
                or not all(isinstance(e, str) and 1 <= len(e) <= 255 for e in elements)):
            raise invalid_argument("elements", "Value must be an array of 1 to 1024 non-empty strings of at most 255 chars")
        spec["elements"] = list(dict.fromkeys(elements))
    elif kind_name == "enum" and existing is None:
        raise AppwriteError("general_argument_invalid", 'Param "elements" is not optional.')
    if kind_name == "enum":
        size = max(len(e) for e in spec["elements"])
    if params.get("encrypt") is not None and "encrypt" in kind.params:
        spec["encrypt"] = bool(params["encrypt"])
    required = params["required"] if params.get("required") is not None else bool(existing and existing["required"])
    array = bool(existing["array"]) if existing else bool(params.get("array"))
    if array and kind.base == "spatial":
        raise invalid_argument("array", "Spatial columns cannot be arrays")
    if "default" in params or existing is None:
        default = params.get("default")
        if default is not None:
            if required or array:
                raise AppwriteError("attribute_default_unsupported",
                                    "Cannot set default value for array or required attributes.")
            column = {"key": "default", "kind": kind_name, "size": size, "spec": spec, "array": False}
            try:
                default = check_value(column, default)
            except _Invalid as exc:
                raise AppwriteError("attribute_value_invalid", f"Invalid default value: {exc}") from None
        spec["default"] = default
    elif required and spec.get("default") is not None:
        raise AppwriteError("attribute_default_unsupported", "Cannot set default value for array or required attributes.")
    return size, spec


# --- validating row values ---------------------------------------------------------------------

class _Invalid(ValueError):
    pass


def normalize_datetime(value: Any) -> str:
    """An ISO-8601 datetime as Appwrite stores it: ``2020-10-15T06:38:00.000+00:00`` (UTC).
    Naive values are taken as UTC. Raises ``ValueError``."""
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError("not a datetime string")
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    parsed = dt.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    try:
        parsed = parsed.astimezone(dt.UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00, 9999-12-31T23:59-14:00
        raise ValueError("datetime out of range") from None
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}+00:00"


def _valid_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https", "ftp", "ftps") and bool(parts.netloc) and " " not in value


def _scalar(column: dict, value: Any) -> Any:
    kind = KINDS[column["kind"]]
    spec = column["spec"]
    if kind.base == "spatial":
        from apps.databases.spatial import SpatialError, normalize

        try:
            return normalize(kind.name, value)
        except SpatialError as exc:
            raise _Invalid(f"must be a valid {kind.type}: {exc}") from None
    if kind.base == "string":
        if not isinstance(value, str):
            raise _Invalid("must be a string")
        if "\x00" in value:  # PostgreSQL text and jsonb cannot hold NUL
            raise _Invalid("must not contain NUL characters")
        if column["size"] is not None and len(value) > column["size"]:
            raise _Invalid(f"must be at most {column['size']} chars")
        if kind.format == "email" and not EMAIL_RE.match(value):
            raise _Invalid("must be a valid email address")
        if kind.format == "url" and not _valid_url(value):
            raise _Invalid("must be a valid URL")
        if kind.format == "ip":
            try:
                ipaddress.ip_address(value)
            except ValueError:
                raise _Invalid("must be a valid IP address") from None
        if kind.format == "enum" and value not in spec.get("elements", ()):
            raise _Invalid(f"must be one of ({', '.join(spec.get('elements', ()))})")
        return value
    if kind.base == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Invalid("must be a valid integer")
        lo, hi = spec.get("min", INT_MIN), spec.get("max", INT_MAX)
        if not lo <= value <= hi:
            raise _Invalid(f"must be a valid range between {lo:,} and {hi:,}")
        return value
    if kind.base == "float":
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise _Invalid("must be a valid float")
        lo, hi = spec.get("min", -FLOAT_MAX), spec.get("max", FLOAT_MAX)
        if not lo <= value <= hi:
            raise _Invalid(f"must be a valid range between {lo:,} and {hi:,}")
        return float(value)
    if kind.base == "boolean":
        if not isinstance(value, bool):
            raise _Invalid("must be a valid boolean")
        return value
    try:
        return normalize_datetime(value)
    except (ValueError, TypeError):
        raise _Invalid("must be a valid date in ISO 8601 format") from None


def check_value(column: dict, value: Any) -> Any:
    """The stored form of ``value`` for ``column`` (arrays element-wise). Raises ``_Invalid``."""
    if column["array"]:
        if not isinstance(value, list):
            raise _Invalid("must be an array")
        if any(v is None for v in value):
            raise _Invalid("must not contain null items")
        return [_scalar(column, v) for v in value]
    return _scalar(column, value)


SYSTEM_KEYS = frozenset({"$id", "$sequence", "$tableId", "$collectionId", "$databaseId", "$createdAt",
                         "$updatedAt", "$permissions"})


def validate_data(columns: list[dict], data: dict, *, partial: bool, invalid) -> dict:
    """Check ``data`` against ``columns`` and return what to store.

    ``partial`` (PATCH) checks only the keys sent; otherwise missing keys take their default
    and required ones must be present. ``None`` means "no value" and is not stored (the
    returned dict maps such keys to ``None`` so callers can drop them from stored data).
    ``invalid(message)`` builds the view's 400 ``*_invalid_structure`` error.
    """
    by_key = {c["key"]: c for c in columns}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in SYSTEM_KEYS:
            continue
        column = by_key.get(key)
        if column is not None and column["kind"] == "relationship":
            if column["spec"].get("hidden"):  # the unseen side of a one-way relationship
                raise invalid(f'Invalid document structure: Unknown attribute: "{key}"')
            continue  # links are checked and written by apps.databases.relations
        if column is None:
            raise invalid(f'Invalid document structure: Unknown attribute: "{key}"')
        if value is None:
            if column["required"]:
                raise invalid(f'Invalid document structure: Missing required attribute "{key}"')
            out[key] = None
            continue
        try:
            out[key] = check_value(column, value)
        except _Invalid as exc:
            raise invalid(f'Invalid document structure: Attribute "{key}" has invalid type. Value {exc}') from None
    if not partial:
        for column in columns:
            key = column["key"]
            if key in out or column["kind"] == "relationship":
                continue
            if column["required"]:
                raise invalid(f'Invalid document structure: Missing required attribute "{key}"')
            default = column["spec"].get("default")
            if default is not None:
                out[key] = default
    return out
