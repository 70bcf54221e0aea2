"""Parameters a route does not declare are ignored, from the query string and from JSON, urlencoded
and multipart bodies alike, as Appwrite's framework does (it hands a route only its declared
parameters). A declared parameter with a bad value is still refused."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from apps.core.http.params import declared_only, validate


class Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    limit: int = 25


def test_declared_only_keeps_declared_names():
    assert declared_only(Sample, {"name": "a", "key": "x", "limit": 3}) == {"name": "a", "limit": 3}
    assert validate(Sample, {"name": "a", "colour": "red"}).name == "a"


def test_a_bad_declared_value_is_still_refused():
    from apps.core.errors import AppwriteError

    with pytest.raises(AppwriteError) as err:
        validate(Sample, {"name": "a", "limit": "many", "other": 1})
    assert err.value.type == "general_argument_invalid" and "`limit`" in err.value.message


CASES = [
    # (name, method, path, request kwargs, status)
    ("query on a GET (the CLI's key=)", "GET", "/locale/countries", {"params": {"key": "abc", "x[0]": "1"}}, 200),
    ("query on a download", "GET", "/avatars/flags/de", {"params": {"key": "abc", "mode": "admin"}}, 200),
    ("JSON body", "POST", "/storage/buckets", {"json": {"bucketId": "unique()", "name": "b", "colour": "red",
                                                        "nested": {"a": 1}}}, 201),
    ("urlencoded body", "POST", "/storage/buckets", {"data": {"bucketId": "unique()", "name": "b", "colour": "red"}},
     201),
    ("query beside a JSON body", "POST", "/storage/buckets?key=abc",
     {"json": {"bucketId": "unique()", "name": "b"}}, 201),
]


@pytest.mark.parametrize("name,method,path,kwargs,status", CASES, ids=[c[0] for c in CASES])
def test_undeclared_parameters_are_ignored(api, name, method, path, kwargs, status):
    r = api.call(method, path, key=True, **kwargs)
    assert r.status_code == status, r.text
    if method == "POST":
        assert "colour" not in r.json() and r.json()["name"] == "b"


def test_declared_parameters_are_still_checked(api):
    r = api.call("POST", "/storage/buckets", key=True, json={"bucketId": "unique()", "name": "b", "colour": "red",
                                                             "maximumFileSize": "big"})
    assert r.status_code == 400 and r.json()["type"] == "general_argument_invalid"
    assert "maximumFileSize" in r.json()["message"]
