"""Unit tables for permission strings and query parsing (pure functions)."""

from __future__ import annotations

import pytest

from apps.core.domain import permissions as perm
from apps.core.domain.queries import MAX_QUERIES, parse_queries
from apps.core.errors import AppwriteError
from apps.core.http.auth import Auth, user_roles

GOOD = ['read("any")', 'update("user:u1/verified")', 'delete("team:t1/owner")', 'read("label:vip")',
        'read("users/unverified")', 'read("member:m1")', 'read("guests")']
BAD = ['read(any)', 'read("nobody")', 'fly("any")', 'read("user:")', 'read("user:_x")', "", 'read("any") ',
       'read("label:has space")']


@pytest.mark.parametrize("text", GOOD)
def test_valid_permissions_parse(text):
    assert perm.normalize([text], perm.CONTAINER_ACTIONS) == [text]


@pytest.mark.parametrize("text", BAD)
def test_invalid_permissions_are_400(text):
    with pytest.raises(AppwriteError) as err:
        perm.normalize([text], perm.ITEM_ACTIONS)
    assert err.value.type == "general_argument_invalid"


def test_write_expands_by_resource_kind():
    assert perm.normalize(['write("any")'], perm.ITEM_ACTIONS) == ['update("any")', 'delete("any")']
    assert perm.normalize(['write("any")'], perm.CONTAINER_ACTIONS) == ['create("any")', 'update("any")', 'delete("any")']


def test_create_is_not_an_item_action():
    with pytest.raises(AppwriteError):
        perm.normalize(['create("any")'], perm.ITEM_ACTIONS)


def test_grant_only_held_roles():
    user = Auth(kind="session", user={"uid": "u1"}, roles=user_roles("u1", verified=False, labels=[]))
    perm.check_grantable(user, ['read("any")', 'read("user:u1")', 'update("users/unverified")'])
    with pytest.raises(AppwriteError) as err:
        perm.check_grantable(user, ['read("user:u2")'])
    assert err.value.type == "user_unauthorized" and err.value.status == 401
    perm.check_grantable(Auth(kind="key", roles=[]), ['read("user:u2")'])


def test_allows_and_defaults():
    user = Auth(kind="session", user={"uid": "u1"}, roles=user_roles("u1", verified=True, labels=["vip"]))
    assert perm.allows(user, ['read("label:vip")'], "read")
    assert not perm.allows(user, ['read("user:u2")'], "read")
    assert not perm.allows(Auth(), ['read("users")'], "read")
    assert perm.allows(Auth(), ['read("any")'], "read")
    assert perm.default_item_permissions(user) == ['read("user:u1")', 'update("user:u1")', 'delete("user:u1")']
    assert perm.default_item_permissions(Auth(kind="key", roles=[])) == []


def test_queries_parse():
    qs = parse_queries(['{"method":"equal","attribute":"a","values":[1,2]}',
                        '{"method":"or","values":[{"method":"isNull","attribute":"b"},{"method":"lessThan","attribute":"c","values":[3]}]}',
                        '{"method":"limit","values":[5]}', '{"method":"select","values":["a","b"]}'])
    assert [q.method for q in qs] == ["equal", "or", "limit", "select"]
    assert qs[1].values[1].attribute == "c"


BAD_QUERIES = [
    ["not json"],
    ['{"method":"explode","attribute":"a"}'],
    ['{"method":"equal","values":[1]}'],
    ['{"method":"limit","values":[-1]}'],
    ['{"method":"limit","values":["5"]}'],
    ['{"method":"between","attribute":"a","values":[1]}'],
    ['{"method":"equal","attribute":"a","values":[{"x":1}]}'],
    ['{"method":"cursorAfter","values":[]}'],
    ["[1,2]"],
    ['{"method":"equal","attribute":"a","values":["' + "x" * 5000 + '"]}'],
    ['{"method":"limit","values":[1]}'] * (MAX_QUERIES + 1),
    ['{"method":"or","values":[{"method":"or","values":[{"method":"or","values":[{"method":"or","values":[{"method":"isNull","attribute":"a"}]}]}]}]}'],
    ['{"method":"and","values":[{"method":"limit","values":[1]}]}'],
]


@pytest.mark.parametrize("raw", BAD_QUERIES, ids=range(len(BAD_QUERIES)))
def test_bad_queries_are_general_query_invalid(raw):
    with pytest.raises(AppwriteError) as err:
        parse_queries(raw)
    assert err.value.type == "general_query_invalid" and err.value.status == 400
