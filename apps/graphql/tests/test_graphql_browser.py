"""GraphQL in headless Chromium: the web SDK's ``Graphql`` service runs in a page
(``tests/websdk/graphql.html``, driven by ``graphql_browser.mjs``) served from another origin than
the API, on the ASGI and the WSGI build, so every query and mutation is a credentialed CORS
request. A guest is refused the account; ``accountCreateAnonymousSession`` through
``POST /v1/graphql/mutation`` sets the session cookie, which the browser then sends with the
SDK's next GraphQL calls (the account, a row created and listed) and with a plain ``fetch`` of
``/v1/account``; a field the guest may not read is refused inside a 200 answer, a bad document
is a 400."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from conftest import ARTIFACTS, Api, make_project
from tests.websdk import CHROMIUM, needs_chromium, needs_playwright, run_node, serve_node_dir

pytestmark = [pytest.mark.browser, needs_chromium, needs_playwright]


@pytest.fixture(scope="module")
def page_origin():
    with serve_node_dir() as origin:
        yield origin


def _table(api: Api) -> tuple[str, str]:
    """A database and a table signed-in users may create rows in and read, with a text column."""
    db = api.call("POST", "/tablesdb", key=True, json={"databaseId": "unique()", "name": "browser"}).json()["$id"]
    t = api.call("POST", f"/tablesdb/{db}/tables", key=True, json={
        "tableId": "unique()", "name": "notes", "permissions": ['read("users")', 'create("users")']})
    assert t.status_code == 201, t.text
    col = api.call("POST", f"/tablesdb/{db}/tables/{t.json()['$id']}/columns/varchar", key=True,
                   json={"key": "title", "size": 64, "required": False})
    assert col.status_code == 202, col.text
    return db, t.json()["$id"]


def run_page(page_origin: str, server, project_id: str, db: str, table: str, sdk: str, shot: str) -> dict:
    url = f"{page_origin}/graphql.html?" + urlencode(
        {"endpoint": server.endpoint, "project": project_id, "db": db, "table": table, "sdk": sdk})
    (ARTIFACTS / "browser").mkdir(parents=True, exist_ok=True)
    done = run_node("graphql_browser.mjs", url, CHROMIUM, str(ARTIFACTS / "browser" / f"{shot}.png"), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# `appwrite-next` is the newest web SDK (npm alias of appwrite@28, tests/websdk/package.json).
@pytest.mark.parametrize(("kind", "sdk"), [("asgi", "appwrite"), ("wsgi", "appwrite"), ("asgi", "appwrite-next")])
def test_graphql_queries_and_mutations_in_chromium(request, kind, sdk, page_origin, django_db_blocker):
    server = request.getfixturevalue(f"{kind}_server")
    project = make_project(django_db_blocker, origins=(page_origin,))
    db, table = _table(Api(server, project))
    shown = run_page(page_origin, server, project.id, db, table, sdk, f"graphql-{kind}-{sdk}")
    assert shown["result"] == "done", shown
    assert shown["guest"] == {"data": None, "type": "general_unauthorized_scope"}
    assert shown["session"] == {"userId": True, "errors": []}
    assert shown["account"] is True
    assert shown["row"] == {"title": "from Chromium", "tableId": True, "ownPermissions": 3}
    assert shown["listed"] == ["from Chromium"]
    assert shown["refused"] == {"usersList": None, "type": "general_unauthorized_scope", "continents": 7}
    assert shown["badDocument"]["code"] == 400 and "nope" in shown["badDocument"]["message"]
    assert shown["plainFetch"] == {"status": 200, "sameUser": True}
    assert shown["withoutCookies"] == 401
    # Over http Chromium refuses the `SameSite=None` cookie (it needs `Secure`) and keeps the
    # `_legacy` one, which is why Appwrite sets both.
    assert f"a_session_{project.id}_legacy".lower() in shown["cookies"]
