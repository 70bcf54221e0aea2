"""The audit log: what is recorded, by whom, how it is served (``GET /account/logs``,
``GET /users/{userId}/logs``), and that reads record nothing."""

from __future__ import annotations

import json

from conftest import Api

CHROME = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/120.0.0.0 Safari/537.36")


def test_account_events_are_logged_with_the_client(api: Api, sql):
    ua = {"User-Agent": CHROME}
    email = "audit@example.com"
    r = api.call("POST", "/account", headers=ua, json={"userId": "unique()", "email": email, "password": "password123"})
    uid = r.json()["$id"]
    token = api.call("POST", "/account/sessions/email", key=True, headers=ua,
                     json={"email": email, "password": "password123"}).json()["secret"]
    assert api.call("PATCH", "/account/name", session=token, headers=ua, json={"name": "Audited"}).status_code == 200
    assert api.call("POST", "/account/jwts", session=token, headers=ua).status_code == 201
    assert api.call("POST", "/teams", session=token, headers=ua, json={"teamId": "unique()", "name": "A"}).status_code == 201
    count = sql("SELECT COUNT(*) FROM audit_log l JOIN accounts_user u ON u.id = l.user_id WHERE u.uid = %s", (uid,))
    for _ in range(3):  # reads record nothing
        api.call("GET", "/account", session=token)
        api.call("GET", "/account/logs", session=token)
        api.call("GET", "/teams", session=token)
    assert sql("SELECT COUNT(*) FROM audit_log l JOIN accounts_user u ON u.id = l.user_id WHERE u.uid = %s",
               (uid,)) == count

    logs = api.call("GET", "/account/logs", session=token).json()
    events = [x["event"] for x in logs["logs"]]
    assert events == ["team.create", "jwt.create", "user.update", "session.create", "user.create"], events
    assert logs["total"] == 5
    entry = logs["logs"][1]  # jwt.create, after the rename
    assert entry["userId"] == uid and entry["userEmail"] == email and entry["userName"] == "Audited"
    assert entry["userType"] == "user" and entry["mode"] == "default" and entry["ip"] == "127.0.0.1"
    assert entry["clientName"] == "Chrome" and entry["clientVersion"].startswith("120") and entry["osName"]
    assert entry["countryCode"] == "--" and entry["countryName"] == "Unknown" and entry["time"].endswith("+00:00")
    signin = logs["logs"][3]
    assert signin["userType"] == "keyProject"  # that session was made with the API key

    page = api.call("GET", "/account/logs", session=token, params={"queries[]": [
        json.dumps({"method": "limit", "values": [2]}), json.dumps({"method": "offset", "values": [1]})]}).json()
    assert [x["event"] for x in page["logs"]] == ["jwt.create", "user.update"] and page["total"] == 5
    assert api.call("GET", "/account/logs", session=token, params={"total": "false"}).json()["total"] == 0
    assert api.call("GET", "/account/logs").json()["type"] == "general_unauthorized_scope"

    assert api.call("PATCH", f"/users/{uid}/status", key=True, json={"status": True}).status_code == 200
    by_key = api.call("GET", f"/users/{uid}/logs", key=True).json()["logs"][0]
    assert by_key["event"] == "user.update" and by_key["userType"] == "keyProject" and by_key["userName"] == "tests"
    assert by_key["userEmail"].startswith(f"app.{api.project.id}@service.")
    api.call("DELETE", "/account/sessions/current", session=token)
    signed_out = api.call("GET", f"/users/{uid}/logs", key=True).json()["logs"][0]
    assert signed_out["event"] == "session.delete" and signed_out["userId"] == uid
    assert api.call("POST", "/account/sessions/email", json={"email": email, "password": "password123"}).status_code == 201
    guest = api.call("GET", f"/users/{uid}/logs", key=True).json()["logs"][0]
    assert guest["event"] == "session.create" and guest["userType"] == "user"
    assert guest["userId"] == uid and guest["userEmail"] == email  # a sign-in names the user who signed in


def test_log_entries_name_the_country_from_the_offline_database(svc_api: Api):
    # svc_api's server has GEOIP_DATABASE (198.51.100.0/24 is DE) and trusts 127.0.0.1 as a proxy.
    user, token = svc_api.signup()
    svc_api.call("PATCH", "/account/name", session=token, json={"name": "Placed"},
                 headers={"X-Forwarded-For": "198.51.100.7"})
    entry = svc_api.call("GET", "/account/logs", session=token).json()["logs"][0]
    assert entry["event"] == "user.update" and entry["ip"] == "198.51.100.7"
    assert (entry["countryCode"], entry["countryName"]) == ("DE", "Germany")
