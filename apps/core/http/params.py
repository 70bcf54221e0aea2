"""Request parameters: query strings, JSON/form/multipart bodies, bracket lists, validation.

Appwrite reads parameters from the query string and the body alike: GET lists
arrive as ``queries[0]=...`` or ``queries[]=...``, multipart as ``permissions[0]``/
``permissions[]``, booleans as ``true``/``false`` strings. :func:`collect` merges them into one
dict (and names the parameters that came as text, the query string's and a form's);
:func:`validate` checks it against the endpoint's pydantic model and turns the first problem into
400 ``general_argument_invalid``. Boolean parameters follow Appwrite's rule, explained in
:mod:`apps.core.http.inputs`.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from urllib.parse import unquote

import orjson
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import RequestContext
from apps.core.http.inputs import STRICT_BOOL, STRICT_NUMBER

# Parameters that carry transport, not input: the project id (web URL builders add it, and an
# empty ``impersonateuserid``) and the impersonation target where a URL cannot carry the
# X-Appwrite-Impersonate-User-* headers (apps.accounts.credentials.authn).
TRANSPORT_PARAMS = frozenset({"project", "impersonateuserid", "impersonateUserId", "impersonateemail",
                              "impersonateEmail", "impersonatephone", "impersonatePhone"})

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

    def __init__(self) -> None:
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


# A JSON object sent as a form (curl's -d sends that Content-Type unless told otherwise): parsed as
# a form, it would have one parameter named after the whole text and each route would then answer
# that its first required parameter is missing.
JSON_AS_FORM = ("The request body is JSON but its Content-Type is application/x-www-form-urlencoded "
                "(curl -d sends that unless told otherwise): send the header Content-Type: application/json.")


def parse_json_body(body: bytes) -> dict[str, Any]:
    """A JSON object body. Raises 400 ``general_bad_request`` for anything else, saying what the
    parser found and where (a trailing comma, single quotes: the usual hand-written slips)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise AppwriteError("general_bad_request", f"The request body is not valid JSON: {exc.msg} at line "
                            f"{exc.lineno}, column {exc.colno}.") from None
    if not isinstance(data, dict):
        raise AppwriteError("general_bad_request", "The request body must be a JSON object.")
    return data


def collect(ctx: RequestContext) -> tuple[dict[str, Any], set[str]]:
    """All parameters of ``ctx``: query, then body (JSON, urlencoded or multipart fields), and the
    names of those that came as text (from the query string or an urlencoded or multipart body,
    not overridden by a JSON body), for the boolean rule (:func:`validate`).

    Body values win over query values of the same name; transport params are dropped.
    Raises 400 ``general_bad_request`` for a malformed body.
    """
    out: dict[str, Any] = {}
    for name, value in ctx.query:
        _assign(out, name, value)
    ctype = ctx.content_type.split(";", 1)[0].strip().lower()
    json: dict[str, Any] | None = None
    if ctx.form is not None:
        for name, value in ctx.form:
            _assign(out, name, value)
    elif ctx.body:
        if ctype == "application/json" or ctype.endswith("+json"):
            json = parse_json_body(ctx.body)
        elif ctype == "application/x-www-form-urlencoded":
            if ctx.body.lstrip()[:1] == b"{":  # ``curl -d '{...}'`` without a Content-Type
                raise AppwriteError("general_bad_request", JSON_AS_FORM)
            for name, value in parse_query(ctx.body):
                _assign(out, name, value)
        elif ctype in ("", "text/plain") and ctx.body.lstrip()[:1] == b"{":
            json = parse_json_body(ctx.body)
    texts = set(out)
    if json is not None:
        out.update(json)
        if texts:
            texts.difference_update(json)
    for name in ctx.files:
        out[name] = ctx.files[name]
    for name in TRANSPORT_PARAMS:
        out.pop(name, None)
    return _finish(out), texts


def _error_reason(err: dict[str, Any]) -> str:
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


@cache
def declared_names(model: type[BaseModel]) -> frozenset[str] | None:
    """The parameter names ``model`` declares (field names and aliases), or ``None`` when the
    model itself takes undeclared keys (``extra`` other than ``"forbid"``)."""
    if model.model_config.get("extra") != "forbid":
        return None
    names = set()
    for name, info in model.model_fields.items():
        names.add(name)
        for alias in (info.alias, info.validation_alias):
            if isinstance(alias, str):
                names.add(alias)
            elif alias is not None and hasattr(alias, "choices"):
                names.update(c for c in alias.choices if isinstance(c, str))
    return frozenset(names)


def declared_only(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the parameters ``model`` does not declare. Appwrite's framework hands a
    route only the parameters it declares and ignores the others, from the query string and the
    body alike (an official CLI adds ``key=`` to download URLs; older SDKs send parameters newer
    servers dropped), so an undeclared parameter is no error here either."""
    names = declared_names(model)
    if names is None:
        return data
    return {k: v for k, v in data.items() if k in names}


def _is_strict_bool(annotation: Any) -> bool:
    """Whether ``annotation`` is :data:`~apps.core.http.inputs.Bool` or holds it (``Bool | None``)."""
    if STRICT_BOOL in getattr(annotation, "__metadata__", ()):
        return True
    return any(_is_strict_bool(arg) for arg in getattr(annotation, "__args__", ()))


def _declares_strict_bool(info: FieldInfo) -> bool:
    return STRICT_BOOL in info.metadata or _is_strict_bool(info.annotation)


@cache
def strict_bools(model: type[BaseModel]) -> dict[str, str]:
    """The :data:`~apps.core.http.inputs.Bool` fields of ``model``: each name a request may use
    (the field's name and its alias) -> the field's name."""
    out = {}
    for name, info in model.model_fields.items():
        if _declares_strict_bool(info):
            out[name] = name
            if isinstance(info.alias, str):
                out[info.alias] = name
    return out


def _leaves(annotation: Any) -> set[Any]:
    """The plain types ``annotation`` is made of (``Annotated[int, ...] | None`` -> int, None)."""
    args = getattr(annotation, "__args__", ())
    if not args or getattr(annotation, "__origin__", None) in (list, dict, tuple, set, frozenset):
        return {annotation}
    return set().union(*(_leaves(arg) for arg in args))


def _number_kind(annotation: Any) -> str:
    """``"integer"`` or ``"float"`` when ``annotation`` is ``int``/``float``, alone or with
    ``None``; ``""`` otherwise (a field that also takes booleans, text or anything keeps them)."""
    leaves = _leaves(annotation) - {type(None)}
    if leaves == {int}:
        return "integer"
    if leaves == {float} or leaves == {int, float}:
        return "float"
    return ""


def _is_strict_number(annotation: Any) -> bool:
    """Whether ``annotation`` is :data:`~apps.core.http.inputs.Int`/``Float`` or holds one."""
    if STRICT_NUMBER in getattr(annotation, "__metadata__", ()):
        return True
    return any(_is_strict_number(arg) for arg in getattr(annotation, "__args__", ()))


@cache
def number_fields(model: type[BaseModel]) -> dict[str, tuple[str, bool]]:
    """The top-level number fields of ``model``: each name a request may use -> ``("integer"`` or
    ``"float"``, whether it is strict in a JSON body (:data:`~apps.core.http.inputs.Int`/``Float``))``)``
    (lists and objects of numbers are left out)."""
    out = {}
    for name, info in model.model_fields.items():
        kind = _number_kind(info.annotation)
        if kind:
            strict = STRICT_NUMBER in info.metadata or _is_strict_number(info.annotation)
            out[name] = (kind, strict)
            if isinstance(info.alias, str):
                out[info.alias] = (kind, strict)
    return out


def _refuses_number(value: Any, kind: str, strict: bool, as_text: bool) -> bool:
    """Whether Appwrite's validator refuses ``value`` for a number field: a boolean always; for a
    strict one (``Integer``/``FloatValidator``) given in a JSON body, anything but a JSON number
    (for an integer, a JSON integer: ``25.0`` and ``"25"`` are refused)."""
    found = type(value)
    if found is bool:
        return True
    if not strict or as_text or value is None:
        return False
    return not (found is int or (found is float and kind == "float"))


def validate(model: type[BaseModel], data: dict[str, Any], texts: set[str] | frozenset[str] = frozenset()) -> BaseModel:
    """``model`` validated from ``data``; parameters it does not declare are ignored
    (:func:`declared_only`). ``texts`` names the parameters that came as text (:func:`collect`):
    a :data:`~apps.core.http.inputs.Bool` field among them takes ``"true"``/``"false"``/``"1"``/``"0"``
    (:mod:`apps.core.http.inputs`); without it, as for a JSON body, only a real boolean. Only a
    model with such fields, on a request with text parameters, does any work for this.

    Raises 400 ``general_argument_invalid``: ``Param "x" is not optional.`` for a missing
    required parameter, ``Invalid `x` param: ...`` for a bad value (a boolean where a number is
    expected too).
    """
    # pydantic's lax int and float take true and false as 1 and 0 ({"port": true} stored port 1),
    # and "25" as 25; Appwrite's Integer and Float validators refuse a boolean, and a strict one
    # anything but a JSON number in a JSON body ({"port": "25"}): so does this (inputs' doc).
    for name, (kind, strict) in number_fields(model).items():
        if name in data and _refuses_number(data[name], kind, strict, name in texts):
            raise invalid_argument(name, f"Value must be a valid {kind}")
    context = None
    if texts:
        bools = strict_bools(model)
        if bools:
            context = {field for name, field in bools.items() if name in texts} or None
    try:
        return model.model_validate(declared_only(model, data), context=context)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = ".".join(str(p) for p in err.get("loc", ())) or "body"
        alias_name = str(err["loc"][0]) if err.get("loc") else name
        if err.get("type") == "missing":
            raise AppwriteError("general_argument_invalid", f'Param "{alias_name}" is not optional.') from None
        raise invalid_argument(name, _error_reason(dict(err))) from None
