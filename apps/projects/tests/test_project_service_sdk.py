"""Conformance: the unmodified Python SDK 27 ``Project`` service against the ASGI build: a server
key manages its own project (platforms, keys, policies, sign-in methods, labels, variables, mock
phones, SMTP with a test mail through a real SMTP server, mail templates)."""

from __future__ import annotations

import time

import pytest
import requests
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.models import (
    EmailTemplate,
    EphemeralKey,
    KeyList,
    MockNumber,
    PlatformAndroid,
    PlatformList,
    PlatformWeb,
    PolicyList,
    Variable,
    VariableList,
)
from appwrite.models import Project as ProjectModel
from appwrite.services.project import Project
from appwrite.services.users import Users

from conftest import make_project


@pytest.fixture
def svc(asgi_server, project) -> Project:
    return Project(Client().set_endpoint(asgi_server.endpoint).set_project(project.id).set_key(project.key))


def _v(value) -> str:
    """An SDK enum's value (or the string itself)."""
    return getattr(value, "value", value)


def _error(call) -> AppwriteException:
    with pytest.raises(AppwriteException) as info:
        call()
    return info.value


def test_project_get_labels_and_auth_methods(svc, project):
    got = svc.get()
    assert isinstance(got, ProjectModel) and got.id == project.id
    assert {_v(m.id): m.enabled for m in got.authmethods}["email-password"] is True
    assert svc.update_labels(["beta", "eu"]).labels == ["beta", "eu"]
    changed = svc.update_auth_method("anonymous", False)
    assert {_v(m.id): m.enabled for m in changed.authmethods}["anonymous"] is False
    assert svc.get().labels == ["beta", "eu"]


def test_platforms(svc, asgi_server, project):
    web = svc.create_web_platform(ID.unique(), "Site", "app.example.test")
    assert isinstance(web, PlatformWeb) and web.hostname == "app.example.test" and _v(web.type) == "web"
    android = svc.create_android_platform(ID.unique(), "Phone", "com.example.app", fingerprints=["AB:CD"])
    assert isinstance(android, PlatformAndroid) and android.applicationid == "com.example.app"
    listed = svc.list_platforms()
    assert isinstance(listed, PlatformList) and {p.id for p in listed.platforms} >= {web.id, android.id}
    assert svc.update_web_platform(web.id, "Site 2", "other.example.test").hostname == "other.example.test"
    # The hostname allows browser requests from that host under any scheme and port.
    r = requests.get(f"{asgi_server.endpoint}/locale", headers={"X-Appwrite-Project": project.id,
                                                               "Origin": "https://other.example.test:8443"})
    assert r.status_code == 200 and r.headers.get("access-control-allow-origin") == "https://other.example.test:8443"
    svc.delete_platform(web.id)
    assert _error(lambda: svc.get_platform(web.id)).type == "platform_not_found"
    assert _error(lambda: svc.create_android_platform(android.id, "Dup", "x.y")).type == "platform_already_exists"


def test_keys_and_ephemeral_keys(svc, asgi_server, project):
    keys = svc.list_keys()
    assert isinstance(keys, KeyList) and keys.total == 1 and keys.keys[0].secret == ""
    own = keys.keys[0]
    eph = svc.create_ephemeral_key(["users.read"], 600)
    assert isinstance(eph, EphemeralKey) and eph.secret.startswith("ephemeral_") and eph.scopes == ["users.read"]
    assert svc.list_keys().total == 1  # ephemeral keys are not listed
    short = Users(Client().set_endpoint(asgi_server.endpoint).set_project(project.id).set_key(eph.secret))
    assert short.list().total >= 0
    assert _error(lambda: short.create(ID.unique(), name="x")).type == "general_unauthorized_scope"
    updated = svc.update_key(own.id, "renamed", own.scopes, description="the tests' key")
    assert updated.name == "renamed" and updated.description == "the tests' key"
    assert svc.get_key(own.id).name == "renamed"
    assert _error(lambda: svc.get_key("missing")).type == "key_not_found"


def test_key_lifecycle_and_expiry(svc, django_db_blocker, asgi_server):
    # A second key of the same project, deleted and expired through the first one.
    from apps.core.http.auth import KEY_SCOPES

    other = make_project(django_db_blocker, scopes=sorted(KEY_SCOPES))
    svc2 = Project(Client().set_endpoint(asgi_server.endpoint).set_project(other.id).set_key(other.key))
    key_id = svc2.list_keys().keys[0].id
    eph = svc2.create_ephemeral_key(["keys.read", "keys.write"], 600)
    by_eph = Project(Client().set_endpoint(asgi_server.endpoint).set_project(other.id).set_key(eph.secret))
    by_eph.update_key(key_id, "expired", ["users.read"], expire="2020-01-01T00:00:00.000+00:00")
    assert _error(lambda: svc2.list_keys()).type == "project_key_expired"
    by_eph.delete_key(key_id)
    assert by_eph.list_keys().total == 0


def test_policies(svc):
    listed = svc.list_policies()
    assert isinstance(listed, PolicyList) and listed.total == 18
    svc.update_password_history_policy(5)
    assert svc.get_policy("password-history").total == 5
    svc.update_session_duration_policy(3600)
    assert svc.get_policy("session-duration").duration == 3600
    svc.update_user_limit_policy(100)
    assert svc.get_policy("user-limit").total == 100
    svc.update_membership_privacy_policy(user_email=False)
    assert svc.get_policy("membership-privacy").useremail is False
    assert svc.update_password_strength_policy(min=12).min == 12
    err = _error(lambda: svc.update_password_pwned_policy(True))
    assert err.code == 400 and err.type == "general_feature_unsupported"
    assert svc.get_policy("password-pwned").enabled is False


def test_variables_and_mock_phones(svc):
    var = svc.create_variable(ID.unique(), "API_URL", "https://example.test", secret=False)
    assert isinstance(var, Variable) and var.value == "https://example.test" and var.resourcetype == "project"
    hidden = svc.create_variable(ID.unique(), "TOKEN", "s3cret")
    assert hidden.secret and hidden.value == ""
    assert isinstance(svc.list_variables(), VariableList) and svc.list_variables().total == 2
    assert svc.update_variable(var.id, value="https://changed.test").value == "https://changed.test"
    assert _error(lambda: svc.update_variable(hidden.id, secret=False)).type == "variable_cannot_unset_secret"
    assert _error(lambda: svc.create_variable(ID.unique(), "TOKEN", "x")).type == "variable_already_exists"
    svc.delete_variable(var.id)
    assert _error(lambda: svc.get_variable(var.id)).type == "variable_not_found"

    mock = svc.create_mock_phone("+15550100", "123456")
    assert isinstance(mock, MockNumber) and mock.otp == "123456"
    assert svc.update_mock_phone("+15550100", "654321").otp == "654321"
    assert svc.list_mock_phones().total == 1
    assert _error(lambda: svc.create_mock_phone("+15550100", "111111")).type == "mock_number_already_exists"
    svc.delete_mock_phone("+15550100")
    assert _error(lambda: svc.get_mock_phone("+15550100")).type == "mock_number_not_found"


def test_smtp_and_test_mail(svc, smtp_server, mail_worker):
    err = _error(lambda: svc.create_smtp_test(["ops@example.test"]))
    assert err.code == 400 and err.type == "general_argument_invalid"  # SMTP is off
    got = svc.update_smtp(host=smtp_server.host, port=smtp_server.port, sender_email="noreply@project.test",
                          sender_name="Project Mailer", password="not-shown", enabled=True)
    assert got.smtpenabled and got.smtphost == smtp_server.host and got.smtppassword == ""
    to = f"ops{time.monotonic_ns()}@example.test"
    svc.create_smtp_test([to])
    message = smtp_server.wait_for(to=to)[0]
    assert "noreply@project.test" in str(message["From"]) and "Project Mailer" in str(message["From"])


def test_mail_templates(svc):
    builtin = svc.get_email_template("recovery", "en")
    assert isinstance(builtin, EmailTemplate) and builtin.subject and builtin.message
    changed = svc.update_email_template("recovery", "de", subject="Passwort zurücksetzen", message="<p>{{url}}</p>")
    assert changed.subject == "Passwort zurücksetzen" and changed.locale == "de"
    assert svc.get_email_template("recovery", "de").message == "<p>{{url}}</p>"
    assert [(t.templateid, t.locale) for t in svc.list_email_templates().templates] == [("recovery", "de")]


def test_oauth2_providers(svc):
    listed = svc.list_o_auth2_providers()
    assert listed.total == 7 and {_v(p.id) for p in listed.providers} >= {"github", "oidc", "apple"}
    github = svc.update_o_auth2_git_hub(client_id="gh-client", client_secret="gh-secret", enabled=True)
    assert github.enabled and github.clientid == "gh-client" and github.clientsecret == ""
    got = svc.get_o_auth2_provider("github")
    assert got.enabled and got.clientid == "gh-client"
    gitlab = svc.update_o_auth2_gitlab(application_id="gl", secret="s", endpoint="https://gitlab.example.test")
    assert gitlab.endpoint == "https://gitlab.example.test" and not gitlab.enabled
    err = _error(lambda: svc.update_o_auth2_amazon(client_id="a", client_secret="b", enabled=True))
    assert err.code == 400 and err.type == "project_provider_unsupported"


def test_service_and_protocol_switches_refuse_keyless_requests(svc, api):
    from appwrite.enums.project_protocol_id import ProjectProtocolId
    from appwrite.enums.project_service_id import ProjectServiceId

    project = svc.update_service(ProjectServiceId.LOCALE, False)
    assert isinstance(project, ProjectModel)
    assert {(_v(s.id), s.enabled) for s in project.services} >= {("locale", False), ("teams", True)}
    r = api.call("GET", "/locale/codes")
    assert r.status_code == 503 and r.json()["type"] == "general_service_disabled"
    assert api.call("GET", "/locale/codes", key=True).status_code == 200  # a server key is never refused
    assert api.call("GET", "/avatars/initials", params={"name": "A B"}).status_code == 200  # other services serve
    svc.update_service(ProjectServiceId.LOCALE, True)
    assert api.call("GET", "/locale/codes").status_code == 200

    project = svc.update_protocol(ProjectProtocolId.REST, False)
    assert {(_v(s.id), s.enabled) for s in project.protocols} == {("rest", False), ("graphql", True),
                                                                   ("websocket", True)}
    r = api.call("GET", "/locale/codes")
    assert r.status_code == 403 and r.json()["type"] == "general_api_disabled"
    assert api.call("GET", "/locale/codes", key=True).status_code == 200
    # GraphQL is its own protocol: its fields still run while REST is off.
    r = api.call("POST", "/graphql", json={"query": "{ localeListCodes { total } }"})
    assert r.status_code == 200 and r.json()["data"]["localeListCodes"]["total"] > 0, r.text
    svc.update_protocol(ProjectProtocolId.REST, True)
    svc.update_protocol(ProjectProtocolId.GRAPHQL, False)
    r = api.call("POST", "/graphql", json={"query": "{ localeListCodes { total } }"})
    assert r.status_code == 403 and r.json()["type"] == "general_api_disabled"
    assert api.call("GET", "/locale/codes").status_code == 200
    assert svc.update_protocol(ProjectProtocolId.GRAPHQL, True).protocols[1].enabled

    for path, body in (("/project/services/vcs", {"enabled": False}), ("/project/protocols/ftp", {"enabled": False}),
                       ("/project/services/locale", {})):
        r = api.call("PATCH", path, key=True, json=body)
        assert r.status_code == 400 and r.json()["type"] == "general_argument_invalid", (path, r.text)


def test_a_key_deletes_its_project(asgi_server, django_db_blocker, sql):
    doomed = make_project(django_db_blocker)
    client = Client().set_endpoint(asgi_server.endpoint).set_project(doomed.id).set_key(doomed.key)
    user = Users(client).create(ID.unique(), email=f"gone{time.monotonic_ns()}@example.test", password="password123")
    svc = Project(client)
    weak = make_project(django_db_blocker, scopes=["project.read"])
    err = _error(lambda: Project(Client().set_endpoint(asgi_server.endpoint).set_project(weak.id)
                                 .set_key(weak.key)).delete())
    assert err.code == 401 and err.type == "general_unauthorized_scope"
    svc.delete()
    err = _error(svc.get)
    assert err.code == 404 and err.type == "project_not_found"
    assert sql("SELECT count(*) FROM projects_project WHERE uid = %s", (doomed.id,)) == [(0,)]
    assert sql("SELECT count(*) FROM accounts_user WHERE uid = %s", (user.id,)) == [(0,)]
