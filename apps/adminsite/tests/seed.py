"""Data for the admin's tests, made through the live server's API with a project key: a user with
a session, a team with a membership, a database with a table (columns, an index, rows with
permissions) and a bucket with an image and a text file; and the check of switched-off services
that the switch tests share."""

from __future__ import annotations

import io
import time

from PIL import Image

from conftest import Api


def _ok(response, status: int = 201) -> dict:
    assert response.status_code in (status, 202), response.text
    return response.json() if response.content else {}


def png(width: int = 240, height: int = 160) -> bytes:
    """A small PNG (a colour gradient)."""
    img = Image.new("RGB", (width, height))
    img.putdata([(x * 255 // width, y * 255 // height, 160) for y in range(height) for x in range(width)])
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def seed(api: Api) -> dict:
    """Returns ``{"user", "session", "team", "database", "table", "rows", "bucket", "image", "text"}``
    (the API's answers; ``session`` is the session secret)."""
    tag = str(time.monotonic_ns())[-8:]
    user, session = api.signup(email=f"ada{tag}@example.com", name="Ada Lovelace")
    team = _ok(api.call("POST", "/teams", key=True, json={"teamId": f"crew{tag}", "name": "Night crew"}))
    _ok(api.call("POST", f"/teams/{team['$id']}/memberships", key=True,
                 json={"userId": user["$id"], "roles": ["lead"]}))
    database = _ok(api.call("POST", "/tablesdb", key=True, json={"databaseId": f"shop{tag}", "name": "Shop"}))
    tables = f"/tablesdb/{database['$id']}/tables"
    table = _ok(api.call("POST", tables, key=True, json={
        "tableId": "products", "name": "Products", "rowSecurity": True,
        "permissions": ['read("any")', 'create("users")']}))
    base = f"{tables}/{table['$id']}"
    _ok(api.call("POST", f"{base}/columns/varchar", key=True, json={"key": "title", "size": 64, "required": True}))
    _ok(api.call("POST", f"{base}/columns/float", key=True, json={"key": "price", "required": False}))
    _ok(api.call("POST", f"{base}/indexes", key=True, json={"key": "by_price", "type": "key", "columns": ["price"]}))
    rows = [_ok(api.call("POST", f"{base}/rows", key=True, json={
        "rowId": f"item{i}", "data": {"title": title, "price": price},
        "permissions": [f'read("user:{user["$id"]}")']}))
        for i, (title, price) in enumerate([("Chair", 49.5), ("Lamp \u00e9clair", 12.0)])]
    bucket = _ok(api.call("POST", "/storage/buckets", key=True, json={
        "bucketId": f"media{tag}", "name": "Media", "permissions": ['read("any")'],
        "maximumFileSize": 5 * 1024 * 1024}))
    files = f"/storage/buckets/{bucket['$id']}/files"
    image = _ok(api.call("POST", files, key=True, data={"fileId": "unique()"},
                         files={"file": ("gradient.png", io.BytesIO(png()), "image/png")}))
    text = _ok(api.call("POST", files, key=True, data={"fileId": "unique()"},
                        files={"file": ("a-rather-long-file-name-for-the-list-of-files.txt",
                                        io.BytesIO(b"notes " * 4000), "text/plain")}))
    return {"user": user, "session": session, "team": team, "database": database, "table": table, "rows": rows,
            "bucket": bucket, "image": image, "text": text}


def account_status(api: Api, session: str, expected: int, within: float = 3.0):
    """``GET /account`` with ``session`` until it answers ``expected`` (or ``within`` seconds
    pass); returns the last response. An admin change reaches the servers' session caches
    through Redis pub/sub, a moment after the admin's request has returned."""
    deadline = time.monotonic() + within
    while True:
        response = api.call("GET", "/account", session=session)
        if response.status_code == expected or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def assert_locale_and_graphql_off(api) -> None:
    """With the project's ``locale`` service and ``graphql`` protocol switched off, the live
    server refuses keyless requests to them (503 ``general_service_disabled``, 403
    ``general_api_disabled``), serves them with a key, and serves the other services."""
    r = api.call("GET", "/locale/codes")
    assert r.status_code == 503 and r.json()["type"] == "general_service_disabled"
    assert api.call("GET", "/locale/codes", key=True).status_code == 200
    r = api.call("POST", "/graphql", json={"query": "{ localeListCodes { total } }"})
    assert r.status_code == 403 and r.json()["type"] == "general_api_disabled"
    assert api.call("GET", "/avatars/initials", params={"name": "A B"}).status_code == 200
