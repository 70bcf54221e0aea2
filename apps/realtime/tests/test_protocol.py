"""The realtime protocol against a live ASGI server: frames, auth, subscriptions."""

from __future__ import annotations

import asyncio
import json
import re

import pyotp
import pytest
import websockets
from appwrite.client import Client
from appwrite.enums.authentication_factor import AuthenticationFactor
from appwrite.enums.authenticator_type import AuthenticatorType
from appwrite.services.account import Account

from apps.realtime.tests.conftest import connect, nothing, recv, recv_type, subscribe
from conftest import make_project

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$")


def test_connected_frame_for_guest_and_user(rt_server, rt_api):
    user, token = rt_api.signup(name="ada")

    async def run():
        ws, connected = await connect(rt_server, rt_api.project.id)
        assert connected == {"type": "connected", "data": {"channels": [], "subscriptions": [], "user": None}}
        await ws.close()
        ws, connected = await connect(rt_server, rt_api.project.id, session=token)
        assert connected["type"] == "connected"
        assert connected["data"]["user"]["$id"] == user["$id"]
        assert connected["data"]["user"]["prefs"] == {}
        await ws.close()
        cookie = {"Cookie": f"a_session_{rt_api.project.id.lower()}={token}"}
        ws, connected = await connect(rt_server, rt_api.project.id, headers=cookie)
        assert connected["data"]["user"]["$id"] == user["$id"]
        await ws.close()
        fallback = {"X-Fallback-Cookies": json.dumps({f"a_session_{rt_api.project.id.lower()}": token})}
        ws, connected = await connect(rt_server, rt_api.project.id, headers=fallback)
        assert connected["data"]["user"]["$id"] == user["$id"]
        await ws.close()

    asyncio.run(run())


def test_authenticate_subscribe_receive_unsubscribe(rt_server, rt_api):
    user, token = rt_api.signup()

    async def run():
        ws, _ = await connect(rt_server, rt_api.project.id)
        await ws.send(json.dumps({"type": "authentication", "data": {"session": token}}))
        auth = await recv(ws)
        assert auth["type"] == "response"
        assert auth["data"]["to"] == "authentication" and auth["data"]["success"] is True
        assert auth["data"]["user"]["$id"] == user["$id"]
        ack = await subscribe(ws, "sub1", ["account"])
        assert ack == {"type": "response", "data": {"to": "subscribe", "success": True, "subscriptions": [
            {"subscriptionId": "sub1", "channels": [f"account.{user['$id']}"], "queries": []}]}}

        r = await asyncio.to_thread(rt_api.call, "PATCH", "/account/prefs", json={"prefs": {"theme": "dark"}},
                                    session=token)
        assert r.status_code == 200, r.text
        event = await recv(ws)
        assert event["type"] == "event"
        data = event["data"]
        assert set(data) == {"events", "channels", "timestamp", "payload", "subscriptions"}
        assert data["subscriptions"] == ["sub1"]
        assert data["channels"] == ["account", f"account.{user['$id']}"]
        assert data["events"][0] == f"users.{user['$id']}.update.prefs"
        assert "users.*.update.prefs" in data["events"] and f"users.{user['$id']}" in data["events"]
        assert ISO_MS.match(data["timestamp"])
        assert data["payload"]["prefs"] == {"theme": "dark"} and data["payload"]["$id"] == user["$id"]
        assert "password" not in data["payload"]

        await ws.send(json.dumps({"type": "unsubscribe", "data": [{"subscriptionId": "sub1"}]}))
        ack = await recv(ws)
        assert ack["data"]["to"] == "unsubscribe" and ack["data"]["subscriptions"][0]["subscriptionId"] == "sub1"
        await asyncio.to_thread(rt_api.call, "PATCH", "/account/name", json={"name": "x"}, session=token)
        await nothing(ws)
        await ws.close()

    asyncio.run(run())


def test_account_events_only_reach_their_user(rt_server, rt_api):
    a, token_a = rt_api.signup()
    b, token_b = rt_api.signup()

    async def run():
        ws_b, _ = await connect(rt_server, rt_api.project.id, session=token_b)
        await subscribe(ws_b, "s", ["account", f"account.{a['$id']}"])
        ws_guest, _ = await connect(rt_server, rt_api.project.id)
        await subscribe(ws_guest, "g", ["account", f"account.{a['$id']}"])
        ws_a, _ = await connect(rt_server, rt_api.project.id, session=token_a)
        await subscribe(ws_a, "s", ["account"])
        for field, body in (("name", {"name": "n"}), ("email", {"email": f"new{a['$id']}@example.com",
                                                                  "password": "password123"})):
            r = await asyncio.to_thread(rt_api.call, "PATCH", f"/account/{field}", json=body, session=token_a)
            assert r.status_code == 200, r.text
            event = await recv_type(ws_a, "event")
            assert event["data"]["events"][0] == f"users.{a['$id']}.update.{field}"
        await nothing(ws_b)
        await nothing(ws_guest, 0.2)
        for ws in (ws_a, ws_b, ws_guest):
            await ws.close()

    asyncio.run(run())


def test_jwt_query_param_and_legacy_channels(rt_server, rt_api):
    user, token = rt_api.signup()
    jwt = rt_api.call("POST", "/account/jwts", session=token).json()["jwt"]

    async def run():
        ws, connected = await connect(rt_server, rt_api.project.id, jwt=jwt, **{"channels[]": "account"})
        assert connected["data"]["user"]["$id"] == user["$id"]
        assert connected["data"]["channels"] == [f"account.{user['$id']}"]
        await asyncio.to_thread(rt_api.call, "PATCH", "/account/name", json={"name": "legacy"}, session=token)
        event = await recv(ws)
        assert event["type"] == "event" and event["data"]["payload"]["name"] == "legacy"
        assert event["data"]["subscriptions"] == []
        await ws.close()

    asyncio.run(run())


def test_ping_bad_frames_and_bad_session(rt_server, rt_api):
    async def run():
        ws, _ = await connect(rt_server, rt_api.project.id)
        await ws.send(json.dumps({"type": "ping"}))
        assert await recv(ws) == {"type": "pong"}
        await ws.send("not json")
        assert await recv(ws) == {"type": "error", "data": {"code": 1003, "message": "Message format is not valid."}}
        await ws.send(json.dumps({"type": "nope"}))
        assert (await recv(ws))["data"]["code"] == 1003
        await ws.send(json.dumps({"type": "authentication", "data": {"session": "garbage"}}))
        assert await recv(ws) == {"type": "error", "data": {"code": 1003, "message": "Session is not valid."}}
        await ws.send(json.dumps({"type": "subscribe", "data": [
            {"subscriptionId": "q", "channels": ["rows"], "queries": ['{"method":"limit","values":[1]}']}]}))
        assert (await recv(ws))["data"]["code"] == 1003
        await ws.send(json.dumps({"type": "ping"}))  # still open
        assert await recv(ws) == {"type": "pong"}
        await ws.close()

    asyncio.run(run())


def test_origin_and_unknown_project_close_1008(rt_server, django_db_blocker):
    p = make_project(django_db_blocker, origins=("http://allowed.example",))

    async def closed_with(project_id, origin=None):
        ws, frame = await connect(rt_server, project_id, origin=origin)
        with pytest.raises(websockets.ConnectionClosed):
            await recv(ws)
        return frame, ws.close_code

    async def run():
        frame, code = await closed_with(p.id, origin="http://evil.example")
        assert code == 1008 and frame["type"] == "error" and frame["data"]["code"] == 1008
        assert "Invalid Origin" in frame["data"]["message"]
        frame, code = await closed_with("no-such-project")
        assert code == 1008 and frame == {"type": "error", "data": {"code": 1008,
                                                                     "message": "Missing or unknown project ID"}}
        ws, connected = await connect(rt_server, p.id, origin="http://allowed.example")
        assert connected["type"] == "connected"
        await ws.close()
        same = rt_server.url  # same-origin pages need no registration
        ws, connected = await connect(rt_server, p.id, origin=same)
        assert connected["type"] == "connected"
        await ws.close()

    asyncio.run(run())


def test_message_rate_limit_closes_1013(rt_server, rt_api):
    async def run():
        ws, _ = await connect(rt_server, rt_api.project.id)
        for _ in range(32):
            await ws.send(json.dumps({"type": "ping"}))
            assert (await recv(ws))["type"] == "pong"
        await ws.send(json.dumps({"type": "ping"}))
        assert await recv(ws) == {"type": "error", "data": {"code": 1013, "message": "Too many messages."}}
        with pytest.raises(websockets.ConnectionClosed):
            await recv(ws)
        assert ws.close_code == 1013

    asyncio.run(run())


BAD_FRAMES = [
    ("not json", "Message format is not valid."),
    ('["a list"]', "Message format is not valid."),
    ('{"data": {}}', "Message format is not valid."),
    ('{"type": "nope"}', "Message type is not valid."),
    ('{"type": "authentication"}', "Payload is not valid."),
    ('{"type": "authentication", "data": {"session": ""}}', "Payload is not valid."),
    ('{"type": "authentication", "data": {"session": "garbage"}}', "Session is not valid."),
    ('{"type": "subscribe", "data": ["x"]}', "Payload is not valid."),
    ('{"type": "subscribe", "data": [{"subscriptionId": "a", "channels": []}]}', "Channels are not valid."),
    ('{"type": "subscribe", "data": [{"subscriptionId": "a", "channels": "rows"}]}', "Channels are not valid."),
    ('{"type": "subscribe", "data": [{"subscriptionId": "a", "channels": [1]}]}', "Channels are not valid."),
    ('{"type": "subscribe", "data": [{"subscriptionId": 5, "channels": ["rows"]}]}', "subscriptionId is not valid."),
    ('{"type": "subscribe", "data": [{"subscriptionId": "a", "channels": ["rows"], "queries": ["{bad"]}]}',
     "Invalid query: query is not valid JSON"),
    ('{"type": "unsubscribe", "data": [{}]}', "Payload is not valid."),
    ("x" * 70000, "Message is too large."),
]


def test_bad_client_frames_get_error_1003_and_store_nothing(rt_server, rt_api):
    async def run():
        ws, _ = await connect(rt_server, rt_api.project.id)
        for text, message in BAD_FRAMES:
            await ws.send(text)
            assert await recv(ws) == {"type": "error", "data": {"code": 1003, "message": message}}, text
        # Nothing was stored: unsubscribing "a" removes nothing.
        await ws.send('{"type": "unsubscribe", "data": [{"subscriptionId": "a"}]}')
        ack = await recv(ws)
        assert ack["data"]["subscriptions"] == [{"subscriptionId": "a", "channels": [], "queries": []}]
        await ws.close()

    asyncio.run(run())


def test_session_waiting_for_mfa_is_a_guest_until_the_challenge(rt_server, rt_api):
    """A first-factor session of a user with MFA on connects as a guest and receives nothing of its
    account; after the TOTP challenge the same session is the user."""
    user, token = rt_api.signup()
    account = Account(Client().set_endpoint(rt_server.endpoint).set_project(rt_api.project.id).set_session(token))
    totp = pyotp.TOTP(account.create_mfa_authenticator(type=AuthenticatorType.TOTP).secret)
    account.update_mfa_authenticator(type=AuthenticatorType.TOTP, otp=totp.now())
    account.update_mfa(mfa=True)
    r = rt_api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                    key=True)
    assert r.status_code == 201, r.text
    partial = r.json()["secret"]
    partial_account = Account(Client().set_endpoint(rt_server.endpoint).set_project(rt_api.project.id)
                              .set_session(partial))

    async def run():
        ws, connected = await connect(rt_server, rt_api.project.id, session=partial)
        assert connected["data"]["user"] is None
        await subscribe(ws, "s", ["account"])
        r = await asyncio.to_thread(rt_api.call, "PATCH", "/account/name", json={"name": "m"}, session=token)
        assert r.status_code == 200, r.text
        await nothing(ws)
        await ws.close()
        challenge = await asyncio.to_thread(partial_account.create_mfa_challenge,
                                            factor=AuthenticationFactor.TOTP)
        await asyncio.to_thread(partial_account.update_mfa_challenge, challenge_id=challenge.id, otp=totp.now())
        ws, connected = await connect(rt_server, rt_api.project.id, session=partial)
        assert connected["data"]["user"]["$id"] == user["$id"]
        await ws.close()

    asyncio.run(run())


def test_websocket_protocol_switched_off_closes_1008(rt_server, rt_api):
    """The Project service's websocket switch: off, a connection without a key is refused."""
    r = rt_api.call("PATCH", "/project/protocols/websocket", key=True, json={"enabled": False})
    assert r.status_code == 200 and {"$id": "websocket", "enabled": False} in r.json()["protocols"]

    async def refused():
        ws, frame = await connect(rt_server, rt_api.project.id)
        with pytest.raises(websockets.ConnectionClosed):
            await recv(ws)
        assert ws.close_code == 1008 and frame["type"] == "error"
        assert frame["data"]["message"] == "The requested API is disabled."

    async def connected():
        ws, frame = await connect(rt_server, rt_api.project.id)
        assert frame["type"] == "connected"
        await ws.close()

    asyncio.run(refused())
    assert rt_api.call("PATCH", "/project/protocols/websocket", key=True, json={"enabled": True}).status_code == 200
    asyncio.run(connected())
