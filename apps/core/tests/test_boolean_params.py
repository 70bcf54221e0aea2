"""Boolean request parameters follow Appwrite's ``Boolean`` validator (apps.core.http.inputs):
a real boolean only, except where the loose rule applies (a parameter Appwrite declares loose, or a
value that came as text: query string, urlencoded or multipart body), which also takes exactly
``"true"``, ``"false"``, ``"1"``, ``"0"``, ``1`` and ``0``. Every other value, pydantic's lax
spellings included, is 400 ``general_argument_invalid`` naming the parameter."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from apps.core.errors import AppwriteError
from apps.core.http.context import RequestContext
from apps.core.http.inputs import STRICT_BOOL, Bool, LooseBool, Strict, loose_boolean
from apps.core.http.params import collect, strict_bools, validate


class Sample(Strict):
    flag: Bool = False
    maybe: Bool | None = None
    total: LooseBool = True
    async_: Bool = Field(False, alias="async")
    limit: int = 25


LOOSE_ACCEPTED = [(True, True), (False, False), ("true", True), ("false", False), ("1", True), ("0", False),
                  (1, True), (0, False)]
# pydantic's lax bool takes most of these; Appwrite's validator takes none of them.
REFUSED = ["off", "on", "yes", "no", "t", "f", "y", "n", "TRUE", "False", " true", "true ", "", "2", "-1", "1.0",
           2, -1, 1.0, 0.0, None, [], [True], {}, {"a": True}, b"true"]


@pytest.mark.parametrize("value,expected", LOOSE_ACCEPTED, ids=repr)
def test_the_loose_rule_accepts_exactly_these(value, expected):
    assert loose_boolean(value) is expected


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_the_loose_rule_refuses_everything_else(value):
    assert loose_boolean(value) is None


@pytest.mark.parametrize("value", [True, False], ids=repr)
def test_a_real_boolean_passes_everywhere(value):
    for texts in (frozenset(), {"flag", "maybe", "total"}):
        got = validate(Sample, {"flag": value, "maybe": value, "total": value}, texts)
        assert (got.flag, got.maybe, got.total) == (value, value, value)


@pytest.mark.parametrize("value", ["true", "false", "1", "0", 1, 0], ids=repr)
def test_json_body_takes_only_real_booleans(value):
    """No ``texts``: the values came in a JSON body (or from the admin's API calls)."""
    for name in ("flag", "maybe", "async"):
        with pytest.raises(AppwriteError) as err:
            validate(Sample, {name: value})
        assert err.value.type == "general_argument_invalid"
        assert err.value.message == f"Invalid `{name}` param: Value must be a valid boolean"


@pytest.mark.parametrize("value,expected", LOOSE_ACCEPTED[:6], ids=repr)
def test_text_values_take_the_loose_rule(value, expected):
    got = validate(Sample, {"flag": value, "maybe": value, "async": value}, {"flag", "maybe", "async"})
    assert (got.flag, got.maybe, got.async_) == (expected, expected, expected)


@pytest.mark.parametrize("value,expected", LOOSE_ACCEPTED, ids=repr)
def test_a_loose_parameter_takes_the_loose_rule_from_json_too(value, expected):
    assert validate(Sample, {"total": value}).total is expected


@pytest.mark.parametrize("value", REFUSED, ids=repr)
@pytest.mark.parametrize("texts", [frozenset(), frozenset({"flag", "maybe", "total"})], ids=["json", "text"])
def test_every_other_value_is_refused_naming_the_parameter(value, texts):
    for name in ("flag", "total") + (() if value is None else ("maybe",)):
        with pytest.raises(AppwriteError) as err:
            validate(Sample, {name: value}, texts)
        assert err.value.type == "general_argument_invalid" and err.value.status == 400
        assert err.value.message.startswith(f"Invalid `{name}` param: "), err.value.message


def test_text_names_only_loosen_their_own_fields():
    with pytest.raises(AppwriteError) as err:
        validate(Sample, {"flag": "true", "maybe": "true"}, {"maybe"})
    assert "`flag`" in err.value.message


def test_strict_bools_lists_names_and_aliases():
    assert strict_bools(Sample) == {"flag": "flag", "maybe": "maybe", "async_": "async_", "async": "async_"}

    class NoBools(Strict):
        name: str = ""

    assert strict_bools(NoBools) == {}


def _ctx(query=(), body=b"", content_type="", form=None):
    return RequestContext(mode="sync", method="POST", path="/x", query=list(query),
                          headers={"content-type": content_type} if content_type else {}, peer_ip="127.0.0.1",
                          body=body, form=form)


def test_collect_names_the_text_parameters():
    raw, texts = collect(_ctx(query=[("flag", "true"), ("queries[]", "a"), ("total", "false")],
                              body=b'{"total": "false", "maybe": true}', content_type="application/json"))
    assert raw == {"flag": "true", "queries": ["a"], "total": "false", "maybe": True}
    assert texts == {"flag", "queries"}  # the JSON body's total overrides the query's
    assert collect(_ctx(body=b"flag=1&maybe=0", content_type="application/x-www-form-urlencoded"))[1] == {
        "flag", "maybe"}
    assert collect(_ctx(form=[("flag", "true")], content_type="multipart/form-data; boundary=x"))[1] == {"flag"}
    assert collect(_ctx(body=b'{"flag": "true"}', content_type="application/json"))[1] == set()


def _plain_bools(model: type[BaseModel]) -> list[str]:
    """Fields of ``model`` typed plain ``bool`` (pydantic's lax rule) anywhere in their annotation."""

    def plain(annotation, metadata=()) -> bool:
        if STRICT_BOOL in metadata or LooseBool.__metadata__[0] in metadata:
            return False
        if annotation is bool:
            return True
        if getattr(annotation, "__metadata__", ()):
            return plain(annotation.__origin__, annotation.__metadata__)
        return any(plain(arg) for arg in getattr(annotation, "__args__", ()))

    return [name for name, info in model.model_fields.items() if plain(info.annotation, tuple(info.metadata))]


def test_the_check_below_sees_a_plain_bool():
    class Lax(BaseModel):
        a: bool = False
        b: bool | None = None
        c: Bool = False

    assert _plain_bools(Lax) == ["a", "b"]


def test_no_endpoint_takes_a_plain_bool():
    from apps.core.http.routes import v1_router

    models = {ep.input for ep in v1_router().endpoints if ep.input is not None}
    assert len(models) > 100
    found = {f"{m.__name__}.{name}" for m in models for name in _plain_bools(m)}
    assert not found, f"typed plain bool (use apps.core.http.inputs.Bool or LooseBool): {sorted(found)}"


class Numbers(Strict):
    limit: int = 25
    port: Annotated[int, Field(ge=1)] | None = None
    scale: float = 1.0


@pytest.mark.parametrize("value", [True, False], ids=repr)
def test_a_boolean_is_not_a_number(value):
    """pydantic's lax int and float take ``true``/``false`` as 1 and 0 (``{"port": true}`` stored
    port 1); Appwrite's Integer and Float validators refuse them."""
    for name, kind in (("limit", "integer"), ("port", "integer"), ("scale", "float")):
        with pytest.raises(AppwriteError) as err:
            validate(Numbers, {name: value})
        assert err.value.message == f"Invalid `{name}` param: Value must be a valid {kind}"


def test_numbers_still_pass():
    got = validate(Numbers, {"limit": 5, "port": None, "scale": 2})
    assert (got.limit, got.port, got.scale) == (5, None, 2.0)
    assert validate(Numbers, {"limit": "5", "scale": "0.5"}, {"limit", "scale"}).limit == 5  # from a query string
