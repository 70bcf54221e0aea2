"""Channel computation, query filters and delivery-time permission checks (no server)."""

from __future__ import annotations

import json

import orjson
import pytest

from apps.core.domain.channels import event_names, families_for, read_roles_for, rewrite_account, with_action_copies
from apps.core.domain.events import WriteEvent
from apps.core.errors import AppwriteError
from apps.realtime.delivery import Subscription, build_message, frames_for
from apps.realtime.filters import compile_queries, matches
from apps.realtime.hub import encode

ROW = {"$id": "r1", "$sequence": "1", "$tableId": "t1", "$databaseId": "db1", "$createdAt": "x", "$updatedAt": "x",
       "$permissions": ['read("user:u1")'], "title": "hello world", "n": 5, "tags": ["a", "b"], "gone": None}


def row_event(action="create", roles=("user:u1",)):
    return WriteEvent("p1", "row", action, {"databaseId": "db1", "tableId": "t1", "rowId": "r1"}, dict(ROW),
                      extra={"read_roles": list(roles)})


def test_row_channels_both_families_with_action_copies():
    rows, documents = families_for(row_event("update"))
    assert rows.name == "rows" and documents.name == "documents"
    for channel in ("rows", "rows.update", "databases.db1.tables.t1.rows", "databases.db1.tables.t1.rows.r1",
                    "databases.db1.tables.t1.rows.update", "databases.db1.tables.t1.rows.r1.update",
                    "tablesdb.db1.tables.t1.rows", "tablesdb.db1.tables.t1.rows.r1.update"):
        assert channel in rows.channels
    for channel in ("documents", "documents.update", "databases.db1.collections.t1.documents",
                    "databases.db1.collections.t1.documents.r1", "databases.db1.collections.t1.documents.r1.update"):
        assert channel in documents.channels
    assert not any(c.endswith(".create") for c in rows.channels + documents.channels)
    assert documents.payload["$collectionId"] == "t1" and "$tableId" not in documents.payload
    assert rows.payload["$tableId"] == "t1" and "$collectionId" not in rows.payload
    assert documents.events[0] == "databases.db1.collections.t1.documents.r1.update"
    assert rows.events[0] == "databases.db1.tables.t1.rows.r1.update"


def test_event_names_wildcards_and_prefixes():
    names = event_names([("buckets", "b"), ("files", "f")], "delete")
    assert names[:2] == ["buckets.b.files.f.delete", "buckets.b.files.*.delete"]
    for name in ("buckets.*.files.*.delete", "buckets.b.files.f", "buckets.*.files.*", "buckets.b", "buckets.*"):
        assert name in names
    assert len(names) == len(set(names))


def test_file_and_account_channels():
    (files,) = families_for(WriteEvent("p", "file", "create", {"bucketId": "b", "fileId": "f"}, {"$id": "f"}))
    assert files.channels == ["files", "buckets.b.files", "buckets.b.files.f", "files.create",
                              "buckets.b.files.create", "buckets.b.files.f.create"]
    (account,) = families_for(WriteEvent("p", "account", "update", {"userId": "u"}, {"$id": "u"},
                                         extra={"detail": "name"}))
    assert account.channels == ["account", "account.u"]
    assert account.events[:2] == ["users.u.update.name", "users.*.update.name"]
    assert read_roles_for(WriteEvent("p", "account", "update", {"userId": "u"}, {})) == ["user:u"]
    assert read_roles_for(WriteEvent("p", "row", "update", {}, {})) is None
    assert families_for(WriteEvent("p", "session", "create", {}, {})) == []
    assert with_action_copies(["account.u"], "update") == ["account.u"]
    assert rewrite_account(["account", "rows"], "u9") == ["account.u9", "rows"]
    assert rewrite_account(["account"], "") == ["account"]


def test_team_and_membership_channels():
    (teams,) = families_for(WriteEvent("p", "team", "update", {"teamId": "t1", "userId": "u"}, {"$id": "t1"},
                                       extra={"detail": "prefs"}))
    assert teams.channels == ["teams", "teams.t1", "teams.update", "teams.t1.update"]
    assert teams.events[:3] == ["teams.t1.update.prefs", "teams.*.update.prefs", "teams.t1.update"]
    (members,) = families_for(WriteEvent("p", "membership", "update", {"teamId": "t1", "membershipId": "m1"},
                                         {"$id": "m1"}, extra={"detail": "status"}))
    assert members.channels == ["memberships", "memberships.m1", "memberships.update", "memberships.m1.update"]
    assert members.events[0] == "teams.t1.memberships.m1.update.status"
    assert "teams.t1.memberships.m1.update" in members.events and "teams.*.memberships.*.update" in members.events
    assert read_roles_for(WriteEvent("p", "membership", "delete", {"teamId": "t1", "membershipId": "m"}, {})) == [
        "team:t1"]
    assert read_roles_for(WriteEvent("p", "team", "create", {"teamId": "t1"}, {})) == ["team:t1"]


def q(method, attribute="", values=None):
    data = {"method": method}
    if attribute:
        data["attribute"] = attribute
    if values is not None:
        data["values"] = values
    return json.dumps(data)


@pytest.mark.parametrize(("query", "hit"), [
    (q("equal", "n", [5]), True), (q("equal", "n", [4, 6]), False), (q("notEqual", "n", [4]), True),
    (q("lessThan", "n", [6]), True), (q("greaterThan", "n", [5]), False), (q("greaterThanEqual", "n", [5]), True),
    (q("lessThanEqual", "n", [4]), False), (q("between", "n", [1, 5]), True), (q("notBetween", "n", [1, 5]), False),
    (q("isNull", "gone"), True), (q("isNull", "missing"), True), (q("isNotNull", "n"), True),
    (q("isNotNull", "gone"), False), (q("startsWith", "title", ["hel"]), True), (q("endsWith", "title", ["xx"]), False),
    (q("notEndsWith", "title", ["xx"]), True), (q("contains", "title", ["lo w"]), True),
    (q("contains", "tags", ["b"]), True), (q("notContains", "tags", ["z"]), True), (q("search", "title", ["WORLD"]), True),
    (q("equal", "tags", ["a"]), True), (q("lessThan", "title", [3]), False), (q("equal", "$id", ["r1"]), True),
    (json.dumps({"method": "and", "values": [json.loads(q("equal", "n", [5])), json.loads(q("equal", "n", [6]))]}), False),
    (json.dumps({"method": "or", "values": [json.loads(q("equal", "n", [5])), json.loads(q("equal", "n", [6]))]}), True),
])
def test_query_filters(query, hit):
    assert matches(ROW, compile_queries([query])) is hit


def test_non_filter_queries_refused():
    with pytest.raises(AppwriteError):
        compile_queries([q("limit", values=[1])])
    with pytest.raises(AppwriteError):
        compile_queries(["{bad"])


def sub(sub_id, channels, queries=()):
    return Subscription(sub_id, list(channels), frozenset(channels), compile_queries(list(queries)), list(queries))


def test_delivery_checks_roles_then_channels_then_queries():
    message = build_message(row_event(), ["user:u1"], "2026-01-01T00:00:00.000+00:00")
    subs = {"a": sub("a", ["rows"]), "b": sub("b", ["documents"]),
            "c": sub("c", ["tablesdb.db1.tables.t1.rows"], [q("equal", "n", [6])]), "d": sub("d", ["files"])}
    frames = [orjson.loads(f) for f in frames_for(message, subs, frozenset(), ["any", "users", "user:u1"])]
    assert [f["data"]["subscriptions"] for f in frames] == [["a"], ["b"]]
    assert frames[1]["data"]["payload"]["$collectionId"] == "t1"
    assert frames_for(message, subs, frozenset(), ["any", "users", "user:u2"]) == []
    assert frames_for(message, subs, frozenset(), ["any", "guests"]) == []
    public = build_message(row_event(), ["any"], "t")
    assert len(frames_for(public, subs, frozenset(), ["any", "guests"])) == 2
    nobody = build_message(row_event(), [], "t")
    assert frames_for(nobody, subs, frozenset(), ["any", "users", "user:u1"]) == []
    legacy = [orjson.loads(f) for f in frames_for(public, {}, frozenset({"documents"}), ["any"])]
    assert [f["data"]["subscriptions"] for f in legacy] == [[]]


def test_message_carries_the_event_and_delivery_derives_its_names():
    """The published message holds the event, not 44 names per row; delivery derives the same
    frames as from the families, and reads messages that still carry families (rolling upgrade)."""
    event = row_event("update")
    message = build_message(event, ["any"], "t")
    assert "families" not in message and message["event"]["ids"]["rowId"] == "r1"
    wire = orjson.loads(encode("p", message)[1])  # what another process reads from the stream
    subs = {"a": sub("a", ["rows.update"]), "b": sub("b", ["databases.db1.collections.t1.documents.r1"])}
    frames = [orjson.loads(f) for f in frames_for(wire, subs, frozenset(), ["any"])]
    rows, documents = families_for(event)
    assert [f["data"]["events"] for f in frames] == [rows.events, documents.events]
    assert [f["data"]["channels"] for f in frames] == [rows.channels, documents.channels]
    assert frames[1]["data"]["payload"] == documents.payload
    old = {"type": message["type"], "roles": ["any"], "timestamp": "t",
           "families": [{"name": f.name, "channels": f.channels, "events": f.events, "payload": f.payload}
                        for f in (rows, documents)]}
    assert [orjson.loads(f) for f in frames_for(old, subs, frozenset(), ["any"])] == frames
    account = build_message(WriteEvent("p", "account", "update", {"userId": "u"}, {"$id": "u"},
                                       extra={"detail": "prefs"}), ["user:u"], "t")
    (frame,) = [orjson.loads(f) for f in frames_for(account, {"s": sub("s", ["account.u"])}, frozenset(), ["user:u"])]
    assert frame["data"]["events"][0] == "users.u.update.prefs"


def test_malformed_events_are_dropped_not_delivered():
    """An event without the IDs its names need is not published (logged once at the writer),
    and a malformed message never closes a receiving connection."""
    from apps.realtime.delivery import message_for

    assert message_for(WriteEvent("p", "row", "create", {"databaseId": "d"}, {}, extra={"read_roles": ["any"]})) is None
    assert message_for(WriteEvent("p", "team", "create", {}, {})) is None
    broken = {"type": "rt.event", "roles": ["any"], "timestamp": "t", "event": {"resource": "row", "action": "create",
                                                                                "ids": {}, "payload": {}}}
    assert frames_for(broken, {"a": sub("a", ["rows"])}, frozenset(), ["any"]) == []
