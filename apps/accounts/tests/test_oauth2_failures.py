"""OAuth2 sign-in failure rows, on the ASGI and the WSGI build (both started here with a 2 s
OAUTH2_HTTP_TIMEOUT): bad input at the start, tampered, replayed and foreign state, mismatched
codes, provider errors and cancels, ID tokens that must not validate (signed by
``oidc_fake.FakeProvider``, the only place the real provider cannot reach), unreachable and
hanging providers, settings changed mid-flight, and the account rules. Each row checks the
status or the failure redirect's ``error`` and that nothing was stored. Never a 500."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
import requests

from apps.accounts.tests.oidc_fake import FakeProvider
from apps.accounts.tests.test_oauth2_flow import APP, FAILURE, SUCCESS, OAuthSetup, configure_oidc, unique_login
from conftest import Api, make_project, start_server

TIMEOUT = 2  # seconds, OAUTH2_HTTP_TIMEOUT of the servers here


@pytest.fixture(scope="module", params=["asgi", "wsgi"])
def fast_server(request, live_env):
    # No project cache, so rows that change project settings with SQL are seen at once.
    server = start_server(request.param, {**live_env, "OAUTH2_HTTP_TIMEOUT": str(TIMEOUT), "PROJECT_CACHE_TTL": "0"})
    yield server
    server.stop()


@pytest.fixture
def oauth(fast_server, oidc_provider, django_db_blocker) -> OAuthSetup:
    project = make_project(django_db_blocker, origins=(APP,))
    configure_oidc(django_db_blocker, project, fast_server, oidc_provider)
    return OAuthSetup(fast_server, project, Api(fast_server, project), oidc_provider)


@pytest.fixture(scope="module")
def fake():
    provider = FakeProvider(hang_seconds=TIMEOUT + 3)
    yield provider
    provider.close()


def counts(sql, project_pk) -> tuple:
    return tuple(sql(f"SELECT count(*) FROM {table} WHERE project_id = %s", (project_pk,))[0][0]
                 for table in ("accounts_user", "accounts_session", "accounts_identity", "accounts_token"))


def failure_error(r: requests.Response) -> dict:
    """The ``error`` a redirect to ``failure`` carries."""
    assert r.status_code == 301, r.text
    location = urlsplit(r.headers["Location"])
    assert urlunsplit((location.scheme, location.netloc, location.path, "", "")) == FAILURE, r.headers["Location"]
    return json.loads(parse_qs(location.query)["error"][0])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the start routes ---------------------------------------------------------------------------

START_CASES = [
    # (id, provider, query changes, status, error type)
    ("ok", "oidc", {}, 301, None),
    ("sdk state param is accepted", "oidc", {"state": "abc"}, 301, None),
    ("native app callback scheme", "oidc", {"success": "appwrite-callback-{project}://auth"}, 301, None),
    ("no success or failure", "oidc", {"success": None, "failure": None}, 301, None),
    ("unknown provider", "nosuch", {}, 400, "general_argument_invalid"),
    ("appwrite provider without a handler", "facebook", {}, 400, "project_provider_unsupported"),
    ("provider not configured", "github", {}, 412, "project_provider_disabled"),
    ("success off the platforms", "oidc", {"success": "https://evil.test/x"}, 400, "general_argument_invalid"),
    ("failure off the platforms", "oidc", {"failure": "https://evil.test/x"}, 400, "general_argument_invalid"),
    ("success with user info", "oidc", {"success": "http://app.test@evil.test/"}, 400, "general_argument_invalid"),
    ("success with a backslash", "oidc", {"success": "http://evil.test\\@app.test/"}, 400,
     "general_argument_invalid"),
    ("success javascript", "oidc", {"success": "javascript:alert(1)"}, 400, "general_argument_invalid"),
    ("success too long", "oidc", {"success": APP + "/" + "a" * 2048}, 400, "general_argument_invalid"),
    ("too many scopes", "oidc", {"scopes[]": ["s"] * 101}, 400, "general_argument_invalid"),
    ("scope too long", "oidc", {"scopes[]": ["s" * 4097]}, 400, "general_argument_invalid"),
    ("undeclared parameter ignored", "oidc", {"admin": "1"}, 301, None),
]


@pytest.mark.parametrize("case", START_CASES, ids=[c[0] for c in START_CASES])
def test_start(oauth: OAuthSetup, sql, case):
    _, provider, changes, status, etype = case
    query = {"project": oauth.project.id, "success": SUCCESS, "failure": FAILURE}
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value.format(project=oauth.project.id) if isinstance(value, str) else value
    before = sql("SELECT count(*) FROM accounts_oauth2state WHERE project_id = %s", (oauth.project.pk,))[0][0]
    for route in ("sessions", "tokens"):
        r = requests.get(f"{oauth.server.endpoint}/account/{route}/oauth2/{provider}", params=query,
                         allow_redirects=False, timeout=30)
        if r.status_code == 414 and case[0] == "scope too long" and oauth.server.kind == "wsgi":
            continue  # gunicorn refuses request lines over 4094 bytes before the application sees them
        assert r.status_code == status, r.text
        assert "Content-Type" in r.headers
        after = sql("SELECT count(*) FROM accounts_oauth2state WHERE project_id = %s", (oauth.project.pk,))[0][0]
        if etype:
            assert r.json()["type"] == etype
            assert after == before
        else:
            assert r.headers["Location"].startswith(oauth.provider.issuer + "/auth?")
            assert after == before + 1
            before = after


@pytest.mark.parametrize("setting", ["disabled", "no secret", "no client id"])
def test_start_provider_unusable(oauth: OAuthSetup, sql, setting):
    column, value = {"disabled": ("enabled", False), "no secret": ("client_secret", ""),
                     "no client id": ("client_id", "")}[setting]
    sql(f"UPDATE accounts_oauthprovider SET {column} = %s WHERE project_id = %s", (value, oauth.project.pk))
    r = oauth.start(requests.Session())
    assert r.status_code == 412 and r.json()["type"] == "project_provider_disabled", r.text


@pytest.mark.parametrize("where", ["closed port", "hanging server"])
def test_start_unreachable_provider_is_a_clear_error_within_the_timeout(oauth: OAuthSetup, sql, where):
    listener = None
    if where == "closed port":
        url = f"http://127.0.0.1:{closed_port()}/.well-known/openid-configuration"
    else:  # accepts the connection, never answers
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/.well-known/openid-configuration"
    sql("UPDATE accounts_oauthprovider SET discovery_url = %s WHERE project_id = %s", (url, oauth.project.pk))
    try:
        started = time.monotonic()
        r = oauth.start(requests.Session())
        elapsed = time.monotonic() - started
    finally:
        if listener:
            listener.close()
    assert r.status_code == 424, r.text
    body = r.json()
    assert body["type"] == "user_oauth2_provider_error"
    assert ("could not be reached" in body["message"]) if where == "closed port" else (
        f"within {TIMEOUT} s" in body["message"])
    assert elapsed < TIMEOUT * 3 + 5  # bounded by the timeout (with room for a busy machine)


# --- the redirect route: state -----------------------------------------------------------------

def started(oauth: OAuthSetup, login: str, http: requests.Session | None = None) -> tuple[requests.Session, str]:
    """A sign-in that went to the provider and came back: ``(browser, callback URL)``."""
    http = http or requests.Session()
    r = oauth.start(http)
    assert r.status_code == 301, r.text
    return http, oauth.provider.login(http, r.headers["Location"], login)


def with_params(url: str, **changes) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    for name, value in changes.items():
        if value is None:
            query.pop(name, None)
        else:
            query[name] = value
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


@pytest.mark.parametrize("state", ["forged", None, "", "s" * 2049])
def test_tampered_or_missing_state(oauth: OAuthSetup, sql, state):
    http, callback = started(oauth, unique_login("tamper"))
    before = counts(sql, oauth.project.pk)
    r = http.get(with_params(callback, state=state), allow_redirects=True, timeout=30)
    assert r.status_code == 400, r.text
    assert r.json()["type"] == ("general_argument_invalid" if state and len(state) > 2048 else "general_bad_request")
    assert counts(sql, oauth.project.pk) == before


def test_replayed_state(oauth: OAuthSetup, sql):
    http, callback = started(oauth, unique_login("replay"))
    assert oauth.finish(http, callback).headers["Location"] == SUCCESS
    before = counts(sql, oauth.project.pk)
    r = http.get(callback, allow_redirects=True, timeout=30)
    assert r.status_code == 400 and r.json()["type"] == "general_bad_request", r.text
    assert counts(sql, oauth.project.pk) == before


def test_state_of_another_provider_or_project(oauth: OAuthSetup, django_db_blocker, sql):
    http, callback = started(oauth, unique_login("foreign"))
    state = parse_qs(urlsplit(callback).query)["state"][0]
    other = make_project(django_db_blocker, origins=(APP,))
    for provider, project in (("github", oauth.project.id), ("oidc", other.id)):
        r = http.get(f"{oauth.server.endpoint}/account/sessions/oauth2/{provider}/redirect",
                     params={"project": project, "state": state, "code": "x"}, allow_redirects=False, timeout=30)
        assert r.status_code == 400 and r.json()["type"] == "general_bad_request", r.text
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


def test_callback_opened_in_another_browser(oauth: OAuthSetup, sql):
    _, callback = started(oauth, unique_login("forwarded"))
    error = failure_error(oauth.finish(requests.Session(), callback))  # no binding cookie
    assert error["type"] == "general_bad_request" and "another browser" in error["message"]
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


# --- the redirect route: code and provider answers ---------------------------------------------

def test_mismatched_code(oauth: OAuthSetup, sql):
    http_a, callback_a = started(oauth, unique_login("code-a"))
    http_b, callback_b = started(oauth, unique_login("code-b"))
    code_b = parse_qs(urlsplit(callback_b).query)["code"][0]
    for code in ("not-a-code", code_b):  # a made-up code; another sign-in's code (PKCE mismatch)
        http, callback = (http_a, callback_a) if code == "not-a-code" else started(oauth, unique_login("code-c"))
        error = failure_error(oauth.finish(http, with_params(callback, code=code)))
        assert error["type"] == "user_oauth2_bad_request" and error["code"] == 400
        assert "invalid_grant" in error["message"]
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


@pytest.mark.parametrize("case", [
    ("user cancels", {"cancel": True}, "user_oauth2_provider_error", "access_denied"),
    ("provider error", {"error": "server_error", "error_description": "try later"}, "user_oauth2_provider_error",
     "server_error: try later"),
    ("missing code", {"code": None}, "user_oauth2_provider_error", "Missing OAuth2 code"),
], ids=lambda c: c[0] if isinstance(c, tuple) else "")
def test_provider_error_goes_to_failure(oauth: OAuthSetup, sql, case):
    _, change, etype, text = case
    http = requests.Session()
    r = oauth.start(http)
    if change.get("cancel"):
        callback = oauth.provider.login(http, r.headers["Location"], None, cancel=True)
    else:
        callback = with_params(oauth.provider.login(http, r.headers["Location"], unique_login("err")), **change)
    error = failure_error(oauth.finish(http, callback))
    assert error["type"] == etype and error["code"] == 424 and text in error["message"], error
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


def test_provider_disabled_mid_flight(oauth: OAuthSetup, sql):
    http, callback = started(oauth, unique_login("midflight"))
    sql("UPDATE accounts_oauthprovider SET enabled = false WHERE project_id = %s", (oauth.project.pk,))
    error = failure_error(oauth.finish(http, callback))
    assert error["type"] == "project_provider_disabled" and error["code"] == 412
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


def test_success_url_unregistered_mid_flight(oauth: OAuthSetup, sql):
    http, callback = started(oauth, unique_login("platform"))
    sql("DELETE FROM projects_platform WHERE project_id = %s", (oauth.project.pk,))
    r = oauth.finish(http, callback)
    assert r.status_code == 400 and r.json()["type"] == "project_invalid_success_url", r.text
    assert "Location" not in r.headers
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


# --- account rules -----------------------------------------------------------------------------

def test_no_email_from_provider(oauth: OAuthSetup, sql):
    http, callback = started(oauth, unique_login("noemail"))
    error = failure_error(oauth.finish(http, callback))
    assert error["type"] == "user_unauthorized" and error["code"] == 401
    assert counts(sql, oauth.project.pk)[:3] == (0, 0, 0)


def test_blocked_user(oauth: OAuthSetup, sql):
    login = unique_login("blocked")
    user, _ = oauth.api.signup(email=f"{login}@example.com")
    sql("UPDATE accounts_user SET status = false WHERE uid = %s", (user["$id"],))
    before = counts(sql, oauth.project.pk)
    http, callback = started(oauth, login)
    error = failure_error(oauth.finish(http, callback))
    assert error["type"] == "user_blocked" and error["code"] == 403
    assert counts(sql, oauth.project.pk) == before


def test_user_limit(oauth: OAuthSetup, sql):
    oauth.api.signup()
    sql("UPDATE projects_project SET auth_limit = 1 WHERE id = %s", (oauth.project.pk,))
    http, callback = started(oauth, unique_login("limit"))
    error = failure_error(oauth.finish(http, callback))
    assert error["type"] == "user_count_exceeded" and error["code"] == 400
    assert counts(sql, oauth.project.pk)[0] == 1


# --- ID tokens and token endpoints the real provider will not produce --------------------------

@pytest.fixture
def fake_setup(fast_server, fake, django_db_blocker, sql):
    from apps.accounts.oauth2.config import provider_configure

    project = make_project(django_db_blocker, origins=(APP,))
    with django_db_blocker.unblock():
        provider_configure(project_uid=project.id, provider="oidc", client_secret="fake-secret", enabled=True,
                           client_id=fake.client_id, discovery_url=fake.discovery_url)
    yield OAuthSetup(fast_server, project, Api(fast_server, project), fake)
    fake.mode = "good"


def fake_sign_in(setup: OAuthSetup) -> tuple[requests.Response, float]:
    http = requests.Session()
    r = setup.start(http)
    assert r.status_code == 301, r.text
    approved = http.get(r.headers["Location"], allow_redirects=False, timeout=30)
    assert approved.status_code == 302
    began = time.monotonic()
    done = setup.finish(http, approved.headers["Location"])
    return done, time.monotonic() - began


FAKE_CASES = [
    ("good", None, None),
    ("bad-signature", "user_oauth2_provider_error", "does not validate"),
    ("bad-audience", "user_oauth2_provider_error", "aud"),
    ("bad-issuer", "user_oauth2_provider_error", "iss"),
    ("expired", "user_oauth2_provider_error", "exp"),
    ("bad-nonce", "user_oauth2_provider_error", "nonce"),
    ("unknown-kid", "user_oauth2_provider_error", "key the provider does not publish"),
    ("hang", "user_oauth2_provider_error", f"within {TIMEOUT} s"),
    ("error-500", "user_oauth2_provider_error", "500"),
    ("invalid-client", "user_oauth2_unauthorized", "invalid_client"),
    ("not-json", "user_oauth2_provider_error", "answered badly"),
]


@pytest.mark.parametrize("case", FAKE_CASES, ids=[c[0] for c in FAKE_CASES])
def test_id_token_and_token_endpoint_failures(fake_setup: OAuthSetup, fake, sql, case):
    mode, etype, text = case
    fake.mode = mode
    r, elapsed = fake_sign_in(fake_setup)
    if etype is None:  # the fake is a valid provider: the rows below fail for their own reason
        assert r.headers["Location"] == SUCCESS, r.headers
        assert counts(sql, fake_setup.project.pk)[:3] == (1, 1, 1)
        return
    error = failure_error(r)
    assert error["type"] == etype and text in error["message"], error
    assert counts(sql, fake_setup.project.pk)[:3] == (0, 0, 0)
    if mode == "hang":
        assert elapsed < TIMEOUT * 3 + 5
