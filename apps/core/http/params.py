"""Request parameters: query strings, JSON/form/multipart bodies, bracket lists, validation.

Appwrite reads parameters from the query string and the body alike: GET lists
arrive as ``queries[0]=...`` or ``queries[]=...``, multipart as ``permissions[0]``/
``permissions[]``, booleans as ``true``/``false`` strings. :func:`collect` merges them into one
dict; :func:`validate` checks it against the endpoint's pydantic model and turns the first
problem into 400 ``general_argument_invalid``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import orjson
from pydantic import BaseModel, ValidationError

from apps.core.errors import AppwriteError, invalid_argument

# Parameters that carry transport, not input: the project id (web URL builders add it, and an
# empty ``impersonateuserid``) and the realtime/file-token credentials.
TRANSPORT_PARAMS = frozenset({"project", "impersonateuserid"})

_BRACKET = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])+)$")
_MAX_LIST_ITEMS = 1000


def parse_query(raw: str | bytes) -> list[tuple[str, str]]:
    """Decode a query string (or urlencoded body) into ordered pairs; blank values are kept.
    The same pairs as ``urllib.parse.parse_qsl(raw, keep_blank_values=True,
    max_num_fields=2000)`` (``&`` separates, ``+`` is a space, ``%XX`` escapes that are not
    UTF-8 become U+FFFD), about three times faster on SDK list calls, whose JSON queries are
    mostly escapes (see :func:`_unquote`).

    Raises 400 ``general_bad_request`` for undecodable bytes and past 2,000 parameters.
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    elif raw:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise AppwriteError("general_bad_request", "The query string is not valid UTF-8.") from None
    if not raw:
        return []
    if raw.count(b"&") >= _MAX_FIELDS:
        raise AppwriteError("general_bad_request", "Too many parameters in the query string.")
    out = []
    for part in raw.split(b"&"):
        if part:
            name, _, value = part.partition(b"=")
            out.append((_unquote(name), _unquote(value)))
    return out


_MAX_FIELDS = 2000


def _unquote(part: bytes) -> str:
    """``urllib.parse.unquote_plus`` of one name or value, done by C codecs: every ``%`` becomes
    a ``\\x`` escape (backslashes doubled first) for the ``unicode_escape`` codec, whose bytes
    are then read as UTF-8. A malformed escape (``%zz``, a ``%`` at the end) makes the codec
    fail; such a part is left to the stdlib, which keeps it as it is."""
    if b"%" not in part and b"+" not in part:
        return part.decode("utf-8", "replace")
    part = part.replace(b"+", b" ")
    try:
        text = part.replace(b"\\", b"\\\\").replace(b"%", b"\\x").decode("unicode_escape")
    except UnicodeDecodeError:
        return unquote(part.decode("utf-8", "replace"))
    return text.encode("latin-1").decode("utf-8", "replace")


def _assign(out: dict[str, Any], name: str, value: Any) -> None:
    """Place ``name=value`` into ``out``, expanding ``a[0]``, ``a[]`` and ``a[b]`` brackets."""
    found = _BRACKET.match(name)
    if not found:
        out[name] = value
        return
    base, rest = found.group(1), found.group(2)
    keys = re.findall(r"\[([^\[\]]*)\]", rest)
    if len(keys) > 1:
        raise AppwriteError("general_bad_request", f"Nested parameter `{name}` is not supported.")
    key = keys[0]
    if key == "" or key.isdigit():
        current = out.get(base)
        if not isinstance(current, _IndexedList):
            current = _IndexedList()
            out[base] = current
        if len(current.items) >= _MAX_LIST_ITEMS:
            raise invalid_argument(base, f"at most {_MAX_LIST_ITEMS} items are allowed")
        current.add(None if key == "" else int(key), value)
    else:
        current = out.get(base)
        if not isinstance(current, dict):
            current = {}
            out[base] = current
        current[key] = value


class _IndexedList:
    """Collects ``a[3]``/``a[]`` items and yields them in index order, appended ones last."""

    __slots__ = ("items", "_next")

    def __init__(self):
        self.items: list[tuple[int, int, Any]] = []
        self._next = 0

    def add(self, index: int | None, value: Any) -> None:
        self._next += 1
        self.items.append((index if index is not None else 10**9, self._next, value))

    def to_list(self) -> list[Any]:
        return [v for _, _, v in sorted(self.items, key=lambda t: (t[0], t[1]))]


def _finish(out: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.to_list() if isinstance(v, _IndexedList) else v) for k, v in out.items()}


def body_error(exc: Exception) -> AppwriteError:
    """The API error for an exception raised while Django parsed a request body (its
    ``MultiPartParser``, ``request.POST``/``request.body``): 413 ``general_payload_too_large``
    when the fields pass ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (``MAX_JSON_BODY``), 400
    ``general_argument_invalid`` for more than ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` fields or
    ``DATA_UPLOAD_MAX_NUMBER_FILES`` files, 400 ``general_bad_request`` for anything else
    (no or a bad boundary, a malformed part, a bad ``Content-Length``)."""
    kind = type(exc).__name__
    if kind == "RequestDataTooBig":
        return AppwriteError("general_payload_too_large", "The request's parameters are too large.")
    if kind == "TooManyFieldsSent":
        return AppwriteError("general_argument_invalid", "The request has too many parameters.")
    if kind == "TooManyFilesSent":
        return AppwriteError("general_argument_invalid", "The request has too many files.")
    return AppwriteError("general_bad_request", "The multipart body could not be parsed.")


def parse_json_body(body: bytes) -> dict[str, Any]:
    """A JSON object body. Raises 400 ``general_bad_request`` for anything else."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise AppwriteError("general_bad_request", "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise AppwriteError("general_bad_request", "The request body must be a JSON object.")
    return data


def collect(ctx) -> dict[str, Any]:
    """All parameters of ``ctx``: query, then body (JSON, urlencoded or multipart fields).

    Body values win over query values of the same name; transport params are dropped.
    Raises 400 ``general_bad_request`` for a malformed body.
    """
    out: dict[str, Any] = {}
    for name, value in ctx.query:
        _assign(out, name, value)
    ctype = ctx.content_type.split(";", 1)[0].strip().lower()
    if ctx.form is not None:
        for name, value in ctx.form:
            _assign(out, name, value)
    elif ctx.body:
        if ctype == "application/json" or ctype.endswith("+json"):
            out.update(parse_json_body(ctx.body))
        elif ctype == "application/x-www-form-urlencoded":
            for name, value in parse_query(ctx.body):
                _assign(out, name, value)
        elif ctype in ("", "text/plain") and ctx.body.lstrip()[:1] == b"{":
            out.update(parse_json_body(ctx.body))
    for name in ctx.files:
        out[name] = ctx.files[name]
    for name in TRANSPORT_PARAMS:
        out.pop(name, None)
    return _finish(out)


def _error_reason(err: dict) -> str:
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    if kind == "string_too_long":
        return f"Value must be a valid string and no longer than {ctx.get('max_length')} chars"
    if kind == "string_too_short":
        return f"Value must be a valid string and at least {ctx.get('min_length')} chars"
    if kind.startswith("string"):
        return "Value must be a valid string"
    if kind.startswith("bool"):
        return "Value must be a valid boolean"
    if kind.startswith("int"):
        return "Value must be a valid integer"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return f"Value must be a valid range ({err.get('msg')})"
    if kind.startswith("dict"):
        return "Value must be a valid object"
    if kind.startswith("list"):
        return "Value must be a valid array"
    if kind == "extra_forbidden":
        return "Unknown parameter"
    return str(err.get("msg", "Value is invalid")).removeprefix("Value error, ")


def validate(model: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    """``model`` validated from ``data``.

    Raises 400 ``general_argument_invalid``: ``Param "x" is not optional.`` for a missing
    required parameter, ``Invalid `x` param: ...`` for a bad value or an unknown parameter.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = ".".join(str(p) for p in err.get("loc", ())) or "body"
        alias_name = str(err["loc"][0]) if err.get("loc") else name
        if err.get("type") == "missing":
            raise AppwriteError("general_argument_invalid", f'Param "{alias_name}" is not optional.') from None
        raise invalid_argument(name, _error_reason(err)) from None
