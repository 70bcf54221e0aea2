"""GraphQL over the /v1 operations on the live ASGI server: the generated schema, queries and
mutations with a key, a guest refused exactly where REST refuses, bad documents, GET, variables,
the SDKs' wrapped body, a user's session on the ASGI and the WSGI build, the official Python SDK
27 and the web SDK 27 under Node."""

from __future__ import annotations

import json

import pytest
from appwrite.client import Client
from appwrite.services.graphql import Graphql

from apps.graphql.schema import field_name
from conftest import Api
from tests.websdk import run_node


def gql(api: Api, query: str, variables: dict | None = None, *, key: bool = False, path: str = "/graphql"):
    return api.call("POST", path, key=key, json={"query": query, "variables": variables or {}})


@pytest.fixture
def table(api: Api):
    """A database and a table guests may read and write, with one text column."""
    db = api.call("POST", "/tablesdb", key=True, json={"databaseId": "unique()", "name": "g"}).json()["$id"]
    t = api.call("POST", f"/tablesdb/{db}/tables", key=True,
                 json={"tableId": "unique()", "name": "notes", "permissions": ['read("any")', 'create("any")']})
    assert t.status_code == 201, t.text
    tid = t.json()["$id"]
    col = api.call("POST", f"/tablesdb/{db}/tables/{tid}/columns/varchar", key=True,
                   json={"key": "title", "size": 64, "required": False})
    assert col.status_code == 202, col.text
    return db, tid


def test_field_names_are_appwrites():
    assert field_name("account.get") == "accountGet"
    assert field_name("tablesDB.listRows") == "tablesDBListRows"


def test_query_and_mutation_with_a_key(api: Api, table):
    db, tid = table
    r = gql(api, """mutation($db: String!, $t: String!) {
        tablesDBCreateRow(databaseId: $db, tableId: $t, rowId: "unique()", data: {title: "hello"})
    }""", {"db": db, "t": tid}, key=True, path="/graphql/mutation")
    assert r.status_code == 200, r.text
    row = r.json()["data"]["tablesDBCreateRow"]
    assert row["title"] == "hello" and row["$tableId"] == tid
    r = gql(api, """query($db: String!, $t: String!) {
        tablesDBListRows(databaseId: $db, tableId: $t, queries: ["{\\"method\\":\\"limit\\",\\"values\\":[5]}"]) {
            total rows { _id _tableId data }
        }
        tablesDBGet(databaseId: $db) { _id name enabled }
    }""", {"db": db, "t": tid}, key=True)
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert "errors" not in r.json()
    assert data["tablesDBListRows"]["total"] == 1
    assert data["tablesDBListRows"]["rows"][0]["data"]["title"] == "hello"
    assert data["tablesDBGet"] == {"_id": db, "name": "g", "enabled": True}


def test_a_guest_is_refused_where_rest_refuses(api: Api, table):
    db, tid = table
    r = gql(api, "query { usersList { total } localeListCodes { total } }")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["data"]["usersList"] is None and body["data"]["localeListCodes"]["total"] > 100
    [error] = body["errors"]
    assert error["path"] == ["usersList"]
    assert error["extensions"] == {"code": 401, "type": "general_unauthorized_scope"}
    rest = api.call("GET", "/users")
    assert rest.status_code == 401 and rest.json()["message"] == error["message"]
    # a guest may create rows in this table (create("any")) but not delete the database
    r = gql(api, f'mutation {{ a: tablesDBCreateRow(databaseId: "{db}", tableId: "{tid}", rowId: "unique()", '
                 f'data: {{title: "guest"}}) b: tablesDBDelete(databaseId: "{db}") }}')
    body = r.json()
    assert body["data"]["a"]["title"] == "guest" and body["data"]["b"] is None
    assert body["errors"][0]["extensions"]["type"] == "general_unauthorized_scope"


@pytest.mark.parametrize("case", [
    ("syntax error", {"query": "query { accountGet { "}, 400, "Syntax Error"),
    ("unknown field", {"query": "query { nope }"}, 400, "Cannot query field 'nope'"),
    ("bad argument type", {"query": 'query { tablesDBGet(databaseId: 5) { _id } }'}, 400, "String cannot represent"),
    ("no document", {"query": ""}, 400, "No GraphQL document"),
    ("too many fields", {"query": "query {" + " ".join(f"f{i}: localeGet {{ ip }}" for i in range(11)) + "}"},
     400, "At most 10 top-level fields"),
    ("too many fields through fragments", {"query": "query { ...A ...A } fragment A on Query {"
                                           + " ".join(f"f{i}: localeGet {{ ip }}" for i in range(6)) + "}"},
     400, "At most 10 top-level fields"),
], ids=lambda c: c[0])
def test_bad_documents(api: Api, case):
    _, body, status, message = case
    r = api.call("POST", "/graphql", json=body)
    assert r.status_code == status, r.text
    assert message in r.json()["errors"][0]["message"]


def test_a_missing_query_is_a_rest_argument_error(api: Api):
    r = api.call("POST", "/graphql", json={"query": 5})
    assert r.status_code == 400 and r.json()["type"] == "general_argument_invalid"


def test_get_runs_queries_only(api: Api):
    r = api.call("GET", "/graphql", params={"query": "query { localeGet { ip countryCode } }"})
    assert r.status_code == 200 and r.json()["data"]["localeGet"]["ip"] == "127.0.0.1"
    r = api.call("GET", "/graphql", params={"query": 'mutation { accountCreateAnonymousSession { _id } }'})
    assert r.status_code == 400 and "POST" in r.json()["errors"][0]["message"]


def test_wrapped_and_batched_bodies(api: Api):
    one = {"query": "query { localeListCountries { total } }", "variables": {}}
    r = api.call("POST", "/graphql", json={"query": one})
    assert r.json()["data"]["localeListCountries"]["total"] == 249
    r = api.call("POST", "/graphql", json={"query": [one, {"query": "{ localeListContinents { total } }"}]})
    assert [b["data"] for b in r.json()] == [{"localeListCountries": {"total": 249}},
                                             {"localeListContinents": {"total": 7}}]


def test_a_session_created_through_graphql_is_set(api: Api):
    r = api.call("POST", "/graphql/mutation", json={"query": "mutation { accountCreateAnonymousSession { _id userId } }"})
    assert r.status_code == 200, r.text
    assert r.json()["data"]["accountCreateAnonymousSession"]["userId"]
    assert any(c.startswith("a_session_") for c in r.cookies.keys())


@pytest.mark.parametrize("build", ["asgi_server", "wsgi_server"])
def test_python_sdk(request, build, project, table):
    server = request.getfixturevalue(build)
    client = Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key)
    graphql = Graphql(client)
    db, _ = table
    got = graphql.query({"query": "query($db: String!) { tablesDBGet(databaseId: $db) { _id name } }",
                         "variables": {"db": db}})
    assert got["data"]["tablesDBGet"] == {"_id": db, "name": "g"}
    made = graphql.mutation({"query": 'mutation { tablesDBCreate(databaseId: "unique()", name: "sdk") { name } }'})
    assert made["data"]["tablesDBCreate"] == {"name": "sdk"}


@pytest.mark.parametrize("sdk", ["appwrite", "appwrite-next"])  # 27.0.0, and the newest (28) by its npm alias
def test_web_sdk(asgi_server, project, table, sdk):
    db, tid = table
    proc = run_node("graphql.mjs", asgi_server.endpoint, project.id, db, tid, sdk)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["created"]["title"] == "from the web SDK"
    assert seen["listed"]["total"] >= 1 and "from the web SDK" in seen["titles"]
    assert seen["refused"] == "general_unauthorized_scope"


@pytest.mark.parametrize("build", ["asgi_server", "wsgi_server"])
@pytest.mark.parametrize("by", ["header", "cookie"])
def test_a_signed_in_user_on_both_builds(request, build, by, project):
    """A user's session (the header a server sends, or the cookie a browser sends) reaches the
    fields on the WSGI build as on the ASGI one."""
    api = Api(request.getfixturevalue(build), project)
    user, session = api.signup()
    auth = ({"session": session} if by == "header"
            else {"headers": {"Cookie": f"a_session_{project.id.lower()}_legacy={session}"}})
    r = api.call("POST", "/graphql", json={"query": "query { accountGet { _id } localeGet { ip } }"}, **auth)
    assert r.status_code == 200, r.text
    assert r.json() == {"data": {"accountGet": {"_id": user["$id"]}, "localeGet": {"ip": "127.0.0.1"}}}
