"""Table-driven cases for the team and membership routes, by caller: the API key, the team's
owner, a member (role ``editor``), a user outside the team and a guest. Refused rows must
leave the team and its memberships unchanged."""

from __future__ import annotations

import time

import pytest

from apps.teams.tests.conftest import TeamWorld

T, M = "/teams/T", "/teams/T/memberships"

CASES = [
    # (id, caller, method, path, body, status, type)
    ("key lists all", "key", "GET", "/teams", None, 200, None),
    ("owner lists", "owner", "GET", "/teams", None, 200, None),
    ("guest list", "guest", "GET", "/teams", None, 401, "general_unauthorized_scope"),
    ("list bad query", "owner", "GET", '/teams?queries[]={"method":"equal","attribute":"secret","values":["x"]}', None,
     400, "general_query_invalid"),
    ("list bad cursor", "key", "GET", '/teams?queries[]={"method":"cursorAfter","values":["nope"]}', None, 400,
     "general_cursor_not_found"),
    ("list search too long", "key", "GET", "/teams?search=" + "x" * 257, None, 400, "general_argument_invalid"),
    # total (query string) takes Appwrite's loose booleans, and nothing more
    ("list total=false", "owner", "GET", "/teams?total=false", None, 200, None),
    ("memberships total=0", "owner", "GET", M + "?total=0", None, 200, None),
    *[(f"list total={v}", "owner", "GET", f"/teams?total={v}", None, 400, "general_argument_invalid")
      for v in ("off", "yes", "2")],
    ("memberships total=no", "key", "GET", M + "?total=no", None, 400, "general_argument_invalid"),
    ("create by key", "key", "POST", "/teams", {"teamId": "unique()", "name": "K"}, 201, None),
    ("create duplicate", "owner", "POST", "/teams", {"teamId": "T", "name": "dup"}, 409, "team_already_exists"),
    ("create bad id", "owner", "POST", "/teams", {"teamId": "-bad", "name": "x"}, 400, "general_argument_invalid"),
    ("create missing name", "owner", "POST", "/teams", {"teamId": "unique()"}, 400, "general_argument_invalid"),
    ("create name too long", "owner", "POST", "/teams", {"teamId": "unique()", "name": "n" * 129}, 400,
     "general_argument_invalid"),
    ("create bad role", "owner", "POST", "/teams", {"teamId": "unique()", "name": "x", "roles": ["a b"]}, 400,
     "general_argument_invalid"),
    ("create too many roles", "owner", "POST", "/teams",
     {"teamId": "unique()", "name": "x", "roles": [f"r{i}" for i in range(101)]}, 400, "general_argument_invalid"),
    ("create undeclared field ignored", "owner", "POST", "/teams", {"teamId": "unique()", "name": "x", "total": 5},
     201, None),
    ("create malformed", "owner", "POST", "/teams", b"{", 400, "general_bad_request"),
    ("create as guest", "guest", "POST", "/teams", {"teamId": "unique()", "name": "x"}, 401,
     "general_unauthorized_scope"),
    ("get by member", "member", "GET", T, None, 200, None),
    ("get by outsider", "outsider", "GET", T, None, 404, "team_not_found"),
    ("get unknown", "key", "GET", "/teams/nope", None, 404, "team_not_found"),
    ("get bad id", "key", "GET", "/teams/" + "x" * 40, None, 400, "general_argument_invalid"),
    ("rename by owner", "owner", "PUT", T, {"name": "Renamed"}, 200, None),
    ("rename by member", "member", "PUT", T, {"name": "Nope"}, 401, "user_unauthorized"),
    ("rename by outsider", "outsider", "PUT", T, {"name": "Nope"}, 404, "team_not_found"),
    ("rename missing name", "owner", "PUT", T, {}, 400, "general_argument_invalid"),
    ("prefs get", "member", "GET", T + "/prefs", None, 200, None),
    ("prefs by owner", "owner", "PUT", T + "/prefs", {"prefs": {"a": 1}}, 200, None),
    ("prefs by member", "member", "PUT", T + "/prefs", {"prefs": {"a": 1}}, 401, "user_unauthorized"),
    ("prefs not object", "owner", "PUT", T + "/prefs", {"prefs": "x"}, 400, "general_argument_invalid"),
    ("prefs too large", "owner", "PUT", T + "/prefs", {"prefs": {"x": "y" * 70000}}, 400, "general_argument_invalid"),
    ("delete by member", "member", "DELETE", T, None, 401, "user_unauthorized"),
    ("delete by outsider", "outsider", "DELETE", T, None, 404, "team_not_found"),
    ("delete unknown", "key", "DELETE", "/teams/nope", None, 404, "team_not_found"),
    ("delete by owner", "owner", "DELETE", T, None, 204, None),
    ("memberships by member", "member", "GET", M, None, 200, None),
    ("memberships by outsider", "outsider", "GET", M, None, 404, "team_not_found"),
    ("memberships bad query", "key", "GET", M + '?queries[]={"method":"equal","attribute":"roles","values":["x"]}',
     None, 400, "general_query_invalid"),
    ("memberships unknown team", "key", "GET", "/teams/nope/memberships", None, 404, "team_not_found"),
    ("add by key", "key", "POST", M, {"email": "NEW", "roles": ["viewer"]}, 201, None),
    ("add by key with phone", "key", "POST", M, {"phone": "+15550002222", "roles": []}, 201, None),
    ("add existing member", "key", "POST", M, {"userId": "MU", "roles": []}, 409, "membership_already_confirmed"),
    ("add unknown user", "key", "POST", M, {"userId": "nobody", "roles": []}, 404, "user_not_found"),
    ("add user and email mismatch", "key", "POST", M, {"userId": "OU", "email": "NEW", "roles": []}, 409,
     "user_already_exists"),
    ("add nobody", "key", "POST", M, {"roles": []}, 400, "general_argument_invalid"),
    ("add missing roles", "key", "POST", M, {"email": "NEW"}, 400, "general_argument_invalid"),
    ("add role too long", "key", "POST", M, {"email": "NEW", "roles": ["r" * 82]}, 400, "general_argument_invalid"),
    ("add bad email", "key", "POST", M, {"email": "nope", "roles": []}, 400, "general_argument_invalid"),
    ("add bad phone", "key", "POST", M, {"phone": "12", "roles": []}, 400, "general_argument_invalid"),
    ("add unknown team", "key", "POST", "/teams/nope/memberships", {"email": "NEW", "roles": []}, 404,
     "team_not_found"),
    ("invite by member", "member", "POST", M, {"email": "NEW", "roles": [], "url": "http://127.0.0.1/join"}, 401,
     "user_unauthorized"),
    ("invite by outsider", "outsider", "POST", M, {"email": "NEW", "roles": [], "url": "http://127.0.0.1/x"}, 404,
     "team_not_found"),
    ("invite without url", "owner", "POST", M, {"email": "NEW", "roles": []}, 400, "general_argument_invalid"),
    ("invite foreign url", "owner", "POST", M, {"email": "NEW", "roles": [], "url": "https://evil.example/x"}, 400,
     "general_argument_invalid"),
    # The API's own host counts as registered (Appwrite's _APP_DOMAIN); the mail is queued.
    ("invite by owner", "owner", "POST", M, {"email": "NEW", "roles": [], "url": "http://127.0.0.1/join"}, 201,
     None),
    ("invite with bad url", "owner", "POST", M, {"email": "NEW", "roles": [], "url": "javascript:alert(1)"}, 400,
     "general_argument_invalid"),
    ("invite to a phone only", "owner", "POST", M, {"phone": "+15550003333", "roles": [], "url": "http://127.0.0.1/j"},
     503, "general_phone_disabled"),
    ("get membership", "member", "GET", M + "/MID", None, 200, None),
    ("get unknown membership", "member", "GET", M + "/nope", None, 404, "membership_not_found"),
    ("get membership other team", "key", "GET", "/teams/OTHER/memberships/MID", None, 404,
     "team_membership_mismatch"),
    ("roles by owner", "owner", "PATCH", M + "/MID", {"roles": ["admin"]}, 200, None),
    ("roles by member", "member", "PATCH", M + "/MID", {"roles": ["owner"]}, 401, "user_unauthorized"),
    ("roles missing", "owner", "PATCH", M + "/MID", {}, 400, "general_argument_invalid"),
    ("roles unknown membership", "owner", "PATCH", M + "/nope", {"roles": []}, 404, "membership_not_found"),
    ("remove by outsider", "outsider", "DELETE", M + "/MID", None, 404, "team_not_found"),
    ("remove owner by member", "member", "DELETE", M + "/OMID", None, 401, "user_unauthorized"),
    ("remove unknown", "owner", "DELETE", M + "/nope", None, 404, "team_invite_not_found"),
    ("member leaves", "member", "DELETE", M + "/MID", None, 204, None),
    ("owner removes member", "owner", "DELETE", M + "/MID", None, 204, None),
    ("accept confirmed", "guest", "PATCH", M + "/MID/status", {"userId": "MU", "secret": "s"}, 401,
     "team_invalid_secret"),
    ("accept unknown", "guest", "PATCH", M + "/nope/status", {"userId": "MU", "secret": "s"}, 404,
     "membership_not_found"),
    ("accept other team", "guest", "PATCH", "/teams/OTHER/memberships/MID/status", {"userId": "MU", "secret": "s"},
     404, "team_membership_mismatch"),
    ("accept missing secret", "guest", "PATCH", M + "/MID/status", {"userId": "MU"}, 400, "general_argument_invalid"),
    ("accept secret too long", "guest", "PATCH", M + "/MID/status", {"userId": "MU", "secret": "s" * 257}, 400,
     "general_argument_invalid"),
]


def _state(sql, world: TeamWorld):
    return (sql("SELECT name, prefs::text FROM teams_team WHERE uid = %s AND project_id = %s",
                (world.team["$id"], world.api.project.pk)),
            sql("SELECT uid, roles::text, confirm FROM teams_membership m WHERE project_id = %s ORDER BY id",
                (world.api.project.pk,)),
            sql("SELECT COUNT(*) FROM accounts_user WHERE project_id = %s", (world.api.project.pk,)))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_team_routes(world: TeamWorld, sql, case):
    _, who, method, path, body, status, etype = case
    other = world.api.call("POST", "/teams", key=True, json={"teamId": "unique()", "name": "Other"}).json()
    names = {"T": world.team["$id"], "MID": world.membership["$id"], "OMID": world.owner_membership["$id"],
             "OTHER": other["$id"], "MU": world.member["$id"], "OU": world.outsider["$id"],
             "NEW": f"n{time.monotonic_ns()}@example.com"}
    path = "/".join(names.get(part, part) for part in path.split("/"))
    if isinstance(body, dict):
        body = {k: names.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
    before = _state(sql, world)
    if isinstance(body, bytes):
        r = world.call(who, method, path, data=body, headers={"Content-Type": "application/json"})
    else:
        r = world.call(who, method, path, json=body)
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"]
    if etype:
        assert r.json()["type"] == etype
        assert _state(sql, world) == before, "a refused request changed the team"


def test_older_clients_get_memberships_without_user_phone(api):
    """Appwrite added Membership.userPhone in 1.9.2: clients asking for an older response
    format get the model without it, in one membership and in lists."""
    team = api.call("POST", "/teams", key=True, json={"teamId": "unique()", "name": "Formats"}).json()
    member, _ = api.signup()
    created = api.call("POST", f"/teams/{team['$id']}/memberships", key=True,
                       json={"userId": member["$id"], "roles": []}).json()
    path = f"/teams/{team['$id']}/memberships"
    assert "userPhone" in api.call("GET", f"{path}/{created['$id']}", key=True).json()
    old = {"X-Appwrite-Response-Format": "1.9.1"}
    one = api.call("GET", f"{path}/{created['$id']}", key=True, headers=old).json()
    assert "userPhone" not in one and one["$id"] == created["$id"]
    listed = api.call("GET", path, key=True, headers=old).json()
    assert listed["total"] == 1 and "userPhone" not in listed["memberships"][0]
    assert "userPhone" in api.call("GET", path, key=True, headers={"X-Appwrite-Response-Format": "1.9.2"}
                                   ).json()["memberships"][0]
