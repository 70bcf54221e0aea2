"""The response-format mechanism: version parsing, filters stacked newest boundary first, list
models, and nothing done for current or newer clients."""

from __future__ import annotations

import orjson
import pytest

from apps.core.http import formats
from apps.core.http.context import RequestContext, json_response


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(formats, "_filters", {})
    return formats


class _Endpoint:
    def __init__(self, response):
        self.response = response


def _ctx(fmt: str | None, model: str) -> RequestContext:
    headers = {"x-appwrite-response-format": fmt} if fmt else {}
    ctx = RequestContext(mode="sync", method="GET", path="/x", query=[], headers=headers, peer_ip="127.0.0.1")
    ctx.endpoint = _Endpoint(model)
    return ctx


@pytest.mark.parametrize("text,parsed", [("1.8.0", (1, 8, 0)), ("1.9", (1, 9, 0)), ("2", (2, 0, 0)),
                                         (" 1.9.6 ", (1, 9, 6)), ("1.8.0-rc1", None), ("", None), ("a.b", None),
                                         ("1.2.3.4", None), ("9999999.0.0", None)])
def test_parse_version(text, parsed):
    assert formats.parse_version(text) == parsed


def test_filters_stack_newest_first_and_cover_lists(registry):
    order = []

    def v21(data):
        order.append("1.9.0")
        data["seq"] = int(data["seq"])
        return data

    def v20(data):
        order.append("1.8.0")
        data.pop("seq")
        return data

    registry.register("row", "1.8.0", v20, lists={"rowList": "rows"})
    registry.register("row", "1.9.0", v21, lists={"rowList": "rows"})
    r = json_response({"seq": "7", "x": 1})
    registry.finish(_ctx("1.7.0", "row"), r)
    assert orjson.loads(r.body) == {"x": 1} and order == ["1.9.0", "1.8.0"]
    r = json_response({"total": 2, "rows": [{"seq": "1"}, {"seq": "2"}]})
    registry.finish(_ctx("1.8.0", "rowList"), r)
    assert orjson.loads(r.body) == {"total": 2, "rows": [{"seq": 1}, {"seq": 2}]}


def test_current_and_newer_formats_are_untouched(registry):
    registry.register("row", "1.9.0", registry.drop("x"))
    for fmt in (None, "1.9.0", "1.9.6"):
        r = json_response({"x": 1})
        body = r.body
        registry.finish(_ctx(fmt, "row"), r)
        assert r.body is body and not r.headers
    r = json_response({"x": 1})
    registry.finish(_ctx("2.5.0", "row"), r)  # SDK 27: no X-Appwrite-Warning (the SDKs print it each call)
    assert orjson.loads(r.body) == {"x": 1} and not r.headers


def test_errors_and_unregistered_models_pass(registry):
    registry.register("row", "1.9.0", registry.drop("x"))
    r = json_response({"x": 1, "type": "row_not_found"}, 404)
    registry.finish(_ctx("1.8.0", "row"), r)
    assert orjson.loads(r.body)["x"] == 1
    r = json_response({"x": 1})
    registry.finish(_ctx("1.8.0", "other"), r)
    assert orjson.loads(r.body) == {"x": 1}


def test_rename_and_default_setting(registry, settings):
    registry.register("thing", "1.9.0", registry.rename(newName="oldName"))
    settings.RESPONSE_FORMAT = "1.8.0"
    r = json_response({"newName": 1})
    registry.finish(_ctx(None, "thing"), r)
    assert orjson.loads(r.body) == {"oldName": 1}
