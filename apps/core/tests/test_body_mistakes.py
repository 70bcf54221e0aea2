"""The request-body slips a new user makes by hand (curl, a hand-written client) are answered with
what is wrong: a JSON body that does not parse names the parser's complaint and its place, and a
JSON object sent with curl's default form Content-Type says to send ``application/json`` instead
of answering that the route's first required parameter is missing."""

from __future__ import annotations

import pytest
import requests

from apps.core.errors import AppwriteError
from apps.core.http.context import RequestContext
from apps.core.http.params import JSON_AS_FORM, collect

FORM = "application/x-www-form-urlencoded"


def _ctx(body: bytes, content_type: str) -> RequestContext:
    return RequestContext(mode="sync", method="POST", path="/x", query=[], headers={"content-type": content_type},
                          peer_ip="127.0.0.1", body=body)


@pytest.mark.parametrize("body, message", [
    (b'{"userId": "unique()",}', "trailing comma is not allowed at line 1, column 22."),
    (b"{'userId': 'unique()'}", "unexpected character, expected a string key at line 1, column 2."),
    (b'{\n  "status": yes\n}', "expected a JSON value at line 2, column 13."),
    (b'{"name": "a"', "unexpected end of data at line 1, column 13."),
])
def test_a_json_typo_is_named_with_its_place(body, message):
    with pytest.raises(AppwriteError) as err:
        collect(_ctx(body, "application/json"))
    assert err.value.type == "general_bad_request"
    assert err.value.message.startswith("The request body is not valid JSON: ") and err.value.message.endswith(message)


@pytest.mark.parametrize("body", [b'{"userId": "unique()"}', b'  {"a": 1}', b"{not even json"])
def test_json_sent_as_a_form_says_which_header_to_send(body):
    with pytest.raises(AppwriteError) as err:
        collect(_ctx(body, f"{FORM}; charset=utf-8"))
    assert err.value.type == "general_bad_request" and err.value.message == JSON_AS_FORM
    assert "Content-Type: application/json" in JSON_AS_FORM


def test_real_forms_and_json_without_a_type_are_unchanged():
    assert collect(_ctx(b"userId=unique()&name=%7Bx%7D", FORM))[0] == {"userId": "unique()", "name": "{x}"}
    assert collect(_ctx(b'{"userId": "unique()"}', ""))[0] == {"userId": "unique()"}
    assert collect(_ctx(b'{"userId": "unique()"}', "application/json"))[0] == {"userId": "unique()"}


def test_a_live_server_answers_them_and_writes_nothing(server, project):
    headers = {"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key}
    users = server.endpoint + "/users"
    # curl -d '{...}' sends this Content-Type
    as_form = requests.post(users, headers={**headers, "Content-Type": FORM},
                            data=b'{"userId": "unique()", "email": "f@example.com"}', timeout=10)
    assert as_form.status_code == 400, as_form.text
    assert as_form.json()["type"] == "general_bad_request" and as_form.json()["message"] == JSON_AS_FORM
    typo = requests.post(users, headers={**headers, "Content-Type": "application/json"},
                         data=b'{"userId": "unique()", "email": "t@example.com",}', timeout=10)
    assert typo.status_code == 400 and typo.json()["type"] == "general_bad_request", typo.text
    assert typo.json()["message"] == ("The request body is not valid JSON: trailing comma is not allowed at line 1, "
                                      "column 48.")
    assert requests.get(users, headers=headers, timeout=10).json()["total"] == 0
