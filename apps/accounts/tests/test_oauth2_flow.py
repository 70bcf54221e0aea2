"""OAuth2 sign-in against a real OpenID provider (npm ``oidc-provider``, ``tests/oidc``) on
every build: the browser (redirect) flow driven over HTTP as a browser would (cookies kept, each
redirect followed by hand), the token flow through the Python SDK 27, linking rules and the
identity they leave. The browser flow in Chromium with the web SDK is in tests/test_oauth2_browser.py;
the failure rows are in test_oauth2_failures.py."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from appwrite.client import Client
from appwrite.enums.o_auth_provider import OAuthProvider
from appwrite.exception import AppwriteException
from appwrite.services.account import Account

from conftest import Api, LiveServer, ProjectInfo, make_project

APP = "http://app.test"  # the project's registered web origin; success/failure live there
SUCCESS, FAILURE = f"{APP}/signed-in?from=oauth", f"{APP}/failed"


def unique_login(prefix: str = "user") -> str:
    return f"{prefix}{time.monotonic_ns() % 10**12}"


@dataclass
class OAuthSetup:
    server: LiveServer
    project: ProjectInfo
    api: Api
    provider: object  # tests.oidc.OIDCProvider

    def start(self, http: requests.Session, route: str = "sessions", session: str | None = None, **params):
        query = {"project": self.project.id, "success": SUCCESS, "failure": FAILURE, **params}
        headers = {"X-Appwrite-Session": session} if session else {}
        return http.get(f"{self.server.endpoint}/account/{route}/oauth2/oidc", params=query, headers=headers,
                        allow_redirects=False, timeout=30)

    def finish(self, http: requests.Session, callback: str, session: str | None = None) -> requests.Response:
        """Follow the provider's redirect to our callback, then to the redirect route; returns
        the redirect route's answer (301 to success or failure, or a JSON error)."""
        r = http.get(callback, allow_redirects=False, timeout=30)
        assert r.status_code == 301, r.text
        location = r.headers["Location"]
        assert location.startswith(f"{self.server.endpoint}/account/sessions/oauth2/oidc/redirect?")
        assert parse_qs(urlsplit(location).query)["project"] == [self.project.id]
        headers = {"X-Appwrite-Session": session} if session else {}
        return http.get(location, allow_redirects=False, headers=headers, timeout=60)

    def sign_in(self, login: str, route: str = "sessions", http: requests.Session | None = None,
                session: str | None = None, **params) -> tuple[requests.Session, requests.Response]:
        http = http or requests.Session()
        r = self.start(http, route, session=session, **params)
        assert r.status_code == 301, r.text
        callback = self.provider.login(http, r.headers["Location"], login)
        return http, self.finish(http, callback, session=session)


def configure_oidc(django_db_blocker, project: ProjectInfo, server: LiveServer, oidc, **extra) -> None:
    from apps.accounts.oauth2.config import provider_configure

    callback = f"{server.url}/v1/account/sessions/oauth2/callback/oidc/{project.id}"
    client_id, secret = oidc.register_client([callback])
    values = {"enabled": True, "client_id": client_id, "discovery_url": oidc.discovery_url, **extra}
    with django_db_blocker.unblock():
        provider_configure(project_uid=project.id, provider="oidc", client_secret=secret, **values)


@pytest.fixture
def oauth(server, oidc_provider, django_db_blocker) -> OAuthSetup:
    project = make_project(django_db_blocker, origins=(APP,))
    configure_oidc(django_db_blocker, project, server, oidc_provider)
    return OAuthSetup(server, project, Api(server, project), oidc_provider)


def session_token(response: requests.Response, project: ProjectInfo) -> str:
    name = f"a_session_{project.id}".lower()
    for header in response.raw.headers.getlist("Set-Cookie"):
        if header.startswith(name + "="):
            return header.split(";", 1)[0].split("=", 1)[1]
    raise AssertionError(f"no {name} cookie in {response.headers}")


def test_start_redirects_to_provider_with_state_and_pkce(oauth: OAuthSetup):
    r = oauth.start(requests.Session(), **{"scopes[]": ["offline_access"]})
    assert r.status_code == 301, r.text
    assert r.headers["Content-Type"].startswith("text/html")
    assert "no-store" in r.headers["Cache-Control"]
    url = urlsplit(r.headers["Location"])
    assert f"{url.scheme}://{url.netloc}" == oauth.provider.issuer and url.path == "/auth"
    q = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert q["response_type"] == "code" and q["code_challenge_method"] == "S256" and len(q["code_challenge"]) == 43
    assert q["scope"] == "openid profile email offline_access"
    assert q["redirect_uri"] == f"{oauth.server.url}/v1/account/sessions/oauth2/callback/oidc/{oauth.project.id}"
    assert len(q["state"]) >= 43 and q["nonce"]
    assert any(c.startswith("a_oauth2_") for c in r.cookies.keys())  # ties the flow to this browser


def test_browser_flow_creates_user_session_and_identity(oauth: OAuthSetup, sql):
    login = unique_login("alice")
    http, r = oauth.sign_in(login)
    assert r.status_code == 301, r.text
    assert r.headers["Location"] == SUCCESS
    token = session_token(r, oauth.project)
    assert f"a_session_{oauth.project.id}_legacy".lower() in r.headers.get("Set-Cookie", "")

    me = oauth.api.call("GET", "/account", session=token).json()
    assert me["email"] == f"{login}@example.com" and me["emailVerification"] is True
    assert me["name"] == login.capitalize() and me["passwordUpdate"] == ""
    current = oauth.api.call("GET", "/account/sessions/current", session=token).json()
    assert current["provider"] == "oidc" and current["providerUid"] == login
    assert current["factors"] == ["email", "oauth2"]
    assert current["providerAccessToken"] and current["providerRefreshToken"]
    assert current["providerAccessTokenExpiry"]
    identities = oauth.api.call("GET", "/account/identities", session=token).json()
    assert identities["total"] == 1
    ident = identities["identities"][0]
    assert (ident["provider"], ident["providerUid"], ident["providerEmail"]) == ("oidc", login, me["email"])
    stored = sql("SELECT provider_access_token FROM accounts_session WHERE uid = %s", (current["$id"],))[0][0]
    assert current["providerAccessToken"] not in stored  # encrypted at rest
    # The provider's access token works at the provider.
    info = requests.get(oauth.provider.issuer + "/me", timeout=10,
                        headers={"Authorization": f"Bearer {current['providerAccessToken']}"})
    assert info.status_code == 200 and info.json()["sub"] == login

    # Signing in again finds the same user through the identity: no second user, no second identity.
    _, again = oauth.sign_in(login)
    assert again.status_code == 301 and again.headers["Location"] == SUCCESS
    me2 = oauth.api.call("GET", "/account", session=session_token(again, oauth.project)).json()
    assert me2["$id"] == me["$id"]
    assert sql("SELECT count(*) FROM accounts_identity WHERE project_id = %s", (oauth.project.pk,))[0][0] == 1
    assert sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (oauth.project.pk,))[0][0] == 1


def test_verified_email_joins_existing_account(oauth: OAuthSetup, sql):
    login = unique_login("carol")
    user, _ = oauth.api.signup(email=f"{login}@example.com")
    _, r = oauth.sign_in(login)
    assert r.status_code == 301 and r.headers["Location"] == SUCCESS, r.headers
    me = oauth.api.call("GET", "/account", session=session_token(r, oauth.project)).json()
    assert me["$id"] == user["$id"]
    assert sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (oauth.project.pk,))[0][0] == 1


def test_new_user_with_unverified_email_is_unverified(oauth: OAuthSetup):
    login = unique_login("unverified")
    _, r = oauth.sign_in(login)
    assert r.headers["Location"] == SUCCESS
    me = oauth.api.call("GET", "/account", session=session_token(r, oauth.project)).json()
    assert me["email"] == f"{login}@example.com" and me["emailVerification"] is False


def test_signed_in_user_links_provider(oauth: OAuthSetup, sql):
    user, session = oauth.api.signup(email=f"{unique_login('dave')}@example.com")
    login = unique_login("dave-elsewhere")
    _, r = oauth.sign_in(login, session=session)
    assert r.status_code == 301 and r.headers["Location"] == SUCCESS, r.headers
    new_token = session_token(r, oauth.project)
    assert oauth.api.call("GET", "/account", session=new_token).json()["$id"] == user["$id"]
    # The session that asked for the link is replaced.
    assert oauth.api.call("GET", "/account", session=session).status_code == 401
    ident = oauth.api.call("GET", "/account/identities", session=new_token).json()["identities"]
    assert [(i["provider"], i["providerUid"]) for i in ident] == [("oidc", login)]


def test_link_refused_when_provider_email_is_another_users(oauth: OAuthSetup, sql):
    _, session = oauth.api.signup()
    login = unique_login("erin")
    oauth.api.signup(email=f"{login}@example.com")  # someone else owns the provider's address
    _, r = oauth.sign_in(login, session=session)
    error = json.loads(parse_qs(urlsplit(r.headers["Location"]).query)["error"][0])
    assert error["type"] == "user_already_exists" and error["code"] == 409
    assert sql("SELECT count(*) FROM accounts_identity WHERE project_id = %s", (oauth.project.pk,))[0][0] == 0


def sdk_token_flow(setup: OAuthSetup, login: str) -> tuple[str, str]:
    """The server-side flow: the SDK gets the provider URL, the user signs in there, the app's
    ``success`` page receives ``userId`` and ``secret``."""
    client = Client().set_endpoint(setup.server.endpoint).set_project(setup.project.id)
    url = Account(client).create_o_auth2_token(provider=OAuthProvider.OIDC, success=SUCCESS, failure=FAILURE)
    assert url.startswith(setup.provider.issuer + "/auth?")
    http = requests.Session()  # the user's browser: it never visited this API before the callback
    r = setup.finish(http, setup.provider.login(http, url, login))
    assert r.status_code == 301, r.text
    location = urlsplit(r.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == f"{APP}/signed-in"
    q = parse_qs(location.query)
    assert q["from"] == ["oauth"]  # the success URL's own query is kept
    assert not r.headers.get("Set-Cookie", "").startswith("a_session_")
    return q["userId"][0], q["secret"][0]


def test_token_flow_through_python_sdk(oauth: OAuthSetup):
    login = unique_login("frank")
    user_id, secret = sdk_token_flow(oauth, login)
    server_client = Client().set_endpoint(oauth.server.endpoint).set_project(oauth.project.id).set_key(oauth.project.key)
    session = Account(server_client).create_session(user_id=user_id, secret=secret)
    assert session.provider == "oidc" and session.factors == ["email"] and session.userid == user_id
    user_client = Client().set_endpoint(oauth.server.endpoint).set_project(oauth.project.id).set_session(session.secret)
    me = Account(user_client).get()
    assert me.email == f"{login}@example.com" and me.emailverification is True
    ids = Account(user_client).list_identities()
    assert ids.total == 1 and ids.identities[0].provider == "oidc"
    # The hand-off secret works once.
    with pytest.raises(AppwriteException) as err:
        Account(server_client).create_session(user_id=user_id, secret=secret)
    assert err.value.code == 401 and err.value.type == "user_invalid_token"


def test_token_secret_is_not_a_plain_token_secret(oauth: OAuthSetup, sql):
    """The inner token is only accepted wrapped in the hand-off JWT, and the JWT only names an
    OAuth2 token: a forged wrapper or the bare secret get 401."""
    import jwt as pyjwt

    user_id, secret = sdk_token_flow(oauth, unique_login("gina"))
    inner = pyjwt.decode(secret, options={"verify_signature": False})["secret"]
    for attempt in (inner, pyjwt.encode({"secret": inner, "provider": "github", "exp": time.time() + 60}, "x" * 32)):
        r = oauth.api.call("POST", "/account/sessions/token", json={"userId": user_id, "secret": attempt})
        assert r.status_code == 401 and r.json()["type"] == "user_invalid_token", r.text
    ok = oauth.api.call("POST", "/account/sessions/token", json={"userId": user_id, "secret": secret})
    assert ok.status_code == 201 and ok.json()["provider"] == "oidc"


def test_embedded_default_sqlite(oidc_provider, live_env, tmp_path, django_db_blocker):
    """The whole browser flow on the embedded default (SQLite, no Redis) on its own server."""
    import subprocess
    import sys

    from conftest import ROOT, start_server

    env = {k: v for k, v in live_env.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "embedded.sqlite3")
    manage = [sys.executable, "manage.py"]
    for args in (["migrate", "-v0"], ["createproject", "emb", "--origin", APP]):
        done = subprocess.run(manage + args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    server = start_server("asgi", env)
    try:
        callback = f"{server.url}/v1/account/sessions/oauth2/callback/oidc/emb"
        client_id, client_secret = oidc_provider.register_client([callback])
        done = subprocess.run(manage + ["oauthprovider", "emb", "oidc", "--enable", "--client-id", client_id,
                                        "--discovery-url", oidc_provider.discovery_url, "--secret-stdin"],
                              cwd=ROOT, env=env, input=client_secret, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        setup = OAuthSetup(server, ProjectInfo("emb", "", 0), None, oidc_provider)
        _, r = setup.sign_in(unique_login("hank"))
        assert r.status_code == 301 and r.headers["Location"] == SUCCESS, r.text
        me = requests.get(server.endpoint + "/account", timeout=10, headers={
            "X-Appwrite-Project": "emb", "X-Appwrite-Session": session_token(r, setup.project)})
        assert me.status_code == 200 and me.json()["email"].startswith("hank")
    finally:
        server.stop()


def test_readme_python_example(api, oidc_provider, django_db_blocker):
    """The OAuth2 page's server-side example (docs/oauth2.md), run as written around the user's
    visit to the provider."""
    from tests import docs

    code = docs.oauth2_ssr_example().replace("http://127.0.0.1:8000/v1", api.server.endpoint)
    before, after = code.split("# ... redirect the user's browser", 1)
    project = make_project(django_db_blocker, origins=("http://localhost:5173",))
    configure_oidc(django_db_blocker, project, api.server, oidc_provider)
    namespace = {"APPWRITE_KEY": project.key}
    exec(before.replace('set_project("demo")', f'set_project("{project.id}")'), namespace)
    http = requests.Session()
    setup = OAuthSetup(api.server, project, Api(api.server, project), oidc_provider)
    login = unique_login("readme")
    landed = urlsplit(setup.finish(http, oidc_provider.login(http, namespace["url"], login)).headers["Location"])
    assert landed.path == "/signed-in"
    namespace.update(user_id=parse_qs(landed.query)["userId"][0], secret=parse_qs(landed.query)["secret"][0])
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(after.split("\n", 1)[1].replace('set_project("demo")', f'set_project("{project.id}")'), namespace)
    assert out.getvalue().strip() == f"{login}@example.com"


def test_session_update_refreshes_provider_tokens(oauth: OAuthSetup, sql):
    """PATCH /account/sessions/{id} of an OAuth2 session asks the provider for fresh tokens."""
    _, r = oauth.sign_in(unique_login("refresh"))
    token = session_token(r, oauth.project)
    before = oauth.api.call("GET", "/account/sessions/current", session=token).json()
    updated = oauth.api.call("PATCH", "/account/sessions/current", session=token)
    assert updated.status_code == 200, updated.text
    after = updated.json()
    assert after["providerAccessToken"] and after["providerAccessToken"] != before["providerAccessToken"]
    assert after["providerAccessTokenExpiry"] >= before["providerAccessTokenExpiry"]
    info = requests.get(oauth.provider.issuer + "/me", timeout=10,
                        headers={"Authorization": f"Bearer {after['providerAccessToken']}"})
    assert info.status_code == 200

    # A refresh token the provider no longer accepts: the provider's refusal, the session unchanged.
    from apps.accounts.oauth2 import crypto

    sql("UPDATE accounts_session SET provider_refresh_token = %s WHERE uid = %s",
        (crypto.encrypt("revoked-or-made-up"), after["$id"]))
    refused = oauth.api.call("PATCH", "/account/sessions/current", session=token)
    assert refused.status_code == 400 and refused.json()["type"] == "user_oauth2_bad_request", refused.text
    still = oauth.api.call("GET", "/account/sessions/current", session=token).json()
    assert still["providerAccessToken"] == after["providerAccessToken"]
