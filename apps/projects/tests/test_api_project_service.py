"""Table-driven cases for the Project and Webhooks services, by caller: a key with every scope,
a key with only ``users.read``, a signed-in user and a guest. Refused rows must change nothing
(checked by comparing ``GET /project``, the variables, platforms and webhooks before and after)."""

from __future__ import annotations

import pytest

from conftest import Api, make_project

LONG = "x" * 300
CASES = [
    # (id, caller, method, path, body, status, type)
    ("get", "key", "GET", "/project", None, 200, None),
    ("get without scope", "weak", "GET", "/project", None, 401, "general_unauthorized_scope"),
    ("get as user", "user", "GET", "/project", None, 401, "general_unauthorized_scope"),
    ("get as guest", "guest", "GET", "/project", None, 401, "general_unauthorized_scope"),
    ("labels bad char", "key", "PUT", "/project/labels", {"labels": ["a b"]}, 400, "general_argument_invalid"),
    ("labels missing", "key", "PUT", "/project/labels", {}, 400, "general_argument_invalid"),
    ("auth method unknown", "key", "PATCH", "/project/auth-methods/nope", {"enabled": True}, 400,
     "general_argument_invalid"),
    ("auth method not bool", "key", "PATCH", "/project/auth-methods/jwt", {"enabled": "maybe"}, 400,
     "general_argument_invalid"),
    ("auth method passkey on", "key", "PATCH", "/project/auth-methods/passkey", {"enabled": True}, 400,
     "general_feature_unsupported"),
    ("service unknown", "key", "PATCH", "/project/services/vcs", {"enabled": False}, 400, "general_argument_invalid"),
    ("service enabled missing", "key", "PATCH", "/project/services/locale", {}, 400, "general_argument_invalid"),
    ("service enabled not bool", "key", "PATCH", "/project/services/locale", {"enabled": "maybe"}, 400,
     "general_argument_invalid"),
    # booleans follow Appwrite's validator, not pydantic's lax bool: "off" would have switched locale off
    *[(f"service enabled {v!r}", "key", "PATCH", "/project/services/locale", {"enabled": v}, 400,
       "general_argument_invalid") for v in ("off", "yes", 2, 0, "true", "false")],
    ("auth method enabled 'no'", "key", "PATCH", "/project/auth-methods/jwt", {"enabled": "no"}, 400,
     "general_argument_invalid"),
    ("protocol enabled 'f'", "key", "PATCH", "/project/protocols/rest", {"enabled": "f"}, 400,
     "general_argument_invalid"),
    ("policy enabled 'on'", "key", "PATCH", "/project/policies/password-dictionary", {"enabled": "on"}, 400,
     "general_argument_invalid"),
    ("service as user", "user", "PATCH", "/project/services/locale", {"enabled": False}, 401,
     "general_unauthorized_scope"),
    ("service as guest", "guest", "PATCH", "/project/services/locale", {"enabled": False}, 401,
     "general_unauthorized_scope"),
    ("protocol unknown", "key", "PATCH", "/project/protocols/ftp", {"enabled": False}, 400, "general_argument_invalid"),
    ("protocol enabled not bool", "key", "PATCH", "/project/protocols/rest", {"enabled": [True]}, 400,
     "general_argument_invalid"),
    ("protocol without scope", "weak", "PATCH", "/project/protocols/rest", {"enabled": False}, 401,
     "general_unauthorized_scope"),
    ("delete project without scope", "weak", "DELETE", "/project", None, 401, "general_unauthorized_scope"),
    ("delete project as user", "user", "DELETE", "/project", None, 401, "general_unauthorized_scope"),
    ("delete project as guest", "guest", "DELETE", "/project", None, 401, "general_unauthorized_scope"),
    ("smtp bad port", "key", "PATCH", "/project/smtp", {"port": 70000}, 400, "general_argument_invalid"),
    # a boolean is not a number (pydantic's lax int stored port 1 and a key of 1 second)
    ("smtp port true", "key", "PATCH", "/project/smtp", {"port": True}, 400, "general_argument_invalid"),
    ("smtp port numeric string", "key", "PATCH", "/project/smtp", {"port": "25"}, 400, "general_argument_invalid"),
    ("smtp port 25.0", "key", "PATCH", "/project/smtp", {"port": 25.0}, 400, "general_argument_invalid"),
    ("ephemeral duration true", "key", "POST", "/project/keys/ephemeral", {"scopes": [], "duration": True}, 400,
     "general_argument_invalid"),
    ("history total true", "key", "PATCH", "/project/policies/password-history", {"total": True}, 400,
     "general_argument_invalid"),
    ("smtp bad secure", "key", "PATCH", "/project/smtp", {"secure": "starttls"}, 400, "general_argument_invalid"),
    ("smtp bad sender", "key", "PATCH", "/project/smtp", {"senderEmail": "nope"}, 400, "general_argument_invalid"),
    ("smtp test while off", "key", "POST", "/project/smtp/tests", {"emails": ["a@example.test"]}, 400,
     "general_argument_invalid"),
    ("smtp test no emails", "key", "POST", "/project/smtp/tests", {"emails": []}, 400, "general_argument_invalid"),
    ("smtp test 11 emails", "key", "POST", "/project/smtp/tests",
     {"emails": [f"a{i}@example.test" for i in range(11)]}, 400, "general_argument_invalid"),
    ("template unknown", "key", "GET", "/project/templates/email/nope", None, 400, "general_argument_invalid"),
    ("template update unknown", "key", "PATCH", "/project/templates/email", {"templateId": "nope", "subject": "x"},
     400, "general_argument_invalid"),
    ("template subject too long", "key", "PATCH", "/project/templates/email",
     {"templateId": "recovery", "subject": LONG}, 400, "general_argument_invalid"),
    *[(f"template locale {v!r}", "key", "PATCH", "/project/templates/email",
       {"templateId": "recovery", "locale": v, "subject": "x"}, 400, "general_argument_invalid")
      for v in ("xx", "en\n", "fr\nx", "en-zz", "klingon", "en_us")],
    ("template get locale unknown", "key", "GET", "/project/templates/email/recovery?locale=xx", None, 400,
     "general_argument_invalid"),
    ("template locale pt-BR", "key", "GET", "/project/templates/email/recovery?locale=pt-BR", None, 200, None),
    ("template locale de", "key", "PATCH", "/project/templates/email",
     {"templateId": "recovery", "locale": "de", "subject": "Hallo"}, 200, None),
    ("template without scope", "weak", "GET", "/project/templates/email", None, 401, "general_unauthorized_scope"),
    # keys
    ("keys list", "key", "GET", "/project/keys", None, 200, None),
    ("keys list total=false", "key", "GET", "/project/keys?total=false", None, 200, None),
    ("keys list total=0", "key", "GET", "/project/keys?total=0", None, 200, None),
    *[(f"keys list total={v}", "key", "GET", f"/project/keys?total={v}", None, 400, "general_argument_invalid")
      for v in ("off", "yes", "2", "False")],
    ("keys bad query", "key", "GET", '/project/keys?queries[]={"method":"equal","attribute":"secret","values":["x"]}',
     None, 400, "general_query_invalid"),
    ("key create by a key", "key", "POST", "/project/keys", {"keyId": "unique()", "name": "k", "scopes": []}, 403,
     "key_creation_denied"),
    ("key get unknown", "key", "GET", "/project/keys/nope", None, 404, "key_not_found"),
    ("key update unknown", "key", "PUT", "/project/keys/nope", {"name": "k", "scopes": []}, 404, "key_not_found"),
    ("key update bad scope", "key", "PUT", "/project/keys/nope", {"name": "k", "scopes": ["root"]}, 400,
     "general_argument_invalid"),
    ("key update bad expire", "key", "PUT", "/project/keys/nope", {"name": "k", "scopes": [], "expire": "soon"}, 400,
     "general_argument_invalid"),
    ("key delete unknown", "key", "DELETE", "/project/keys/nope", None, 404, "key_not_found"),
    ("ephemeral too long", "key", "POST", "/project/keys/ephemeral", {"scopes": ["users.read"], "duration": 3601},
     400, "general_argument_invalid"),
    ("ephemeral unknown scope", "key", "POST", "/project/keys/ephemeral", {"scopes": ["nope"], "duration": 60}, 400,
     "general_argument_invalid"),
    ("ephemeral without scope", "weak", "POST", "/project/keys/ephemeral", {"scopes": ["users.read"], "duration": 60},
     401, "general_unauthorized_scope"),
    # platforms
    ("platform bad hostname", "key", "POST", "/project/platforms/web",
     {"platformId": "unique()", "name": "w", "hostname": "https://a.test/x"}, 400, "general_argument_invalid"),
    ("platform blank name", "key", "POST", "/project/platforms/web",
     {"platformId": "unique()", "name": "", "hostname": "a.test"}, 400, "general_argument_invalid"),
    ("platform bad id", "key", "POST", "/project/platforms/apple",
     {"platformId": "-bad", "name": "a", "bundleIdentifier": "x.y"}, 400, "general_argument_invalid"),
    ("platform missing identifier", "key", "POST", "/project/platforms/linux",
     {"platformId": "unique()", "name": "l"}, 400, "general_argument_invalid"),
    ("platform get unknown", "key", "GET", "/project/platforms/nope", None, 404, "platform_not_found"),
    ("platform update unknown", "key", "PUT", "/project/platforms/web/nope", {"name": "w", "hostname": "a.test"}, 404,
     "platform_not_found"),
    ("platform delete unknown", "key", "DELETE", "/project/platforms/nope", None, 404, "platform_not_found"),
    ("platform unknown type", "key", "POST", "/project/platforms/tv", {"platformId": "unique()", "name": "t"}, 405,
     "general_not_implemented"),
    ("platforms without scope", "weak", "GET", "/project/platforms", None, 401, "general_unauthorized_scope"),
    # policies
    ("policies list", "key", "GET", "/project/policies", None, 200, None),
    ("policy unknown", "key", "GET", "/project/policies/nope", None, 400, "general_argument_invalid"),
    ("history too long", "key", "PATCH", "/project/policies/password-history", {"total": 21}, 400,
     "general_argument_invalid"),
    ("history missing", "key", "PATCH", "/project/policies/password-history", {}, 400, "general_argument_invalid"),
    ("duration too short", "key", "PATCH", "/project/policies/session-duration", {"duration": 59}, 400,
     "general_argument_invalid"),
    ("strength too short", "key", "PATCH", "/project/policies/password-strength", {"min": 7}, 400,
     "general_argument_invalid"),
    ("strength symbols", "key", "PATCH", "/project/policies/password-strength", {"symbols": True}, 400,
     "general_feature_unsupported"),
    ("dictionary deny list", "key", "PATCH", "/project/policies/password-dictionary",
     {"enabled": True, "denyList": ["hunter2"]}, 400, "general_feature_unsupported"),
    ("rotation on", "key", "PATCH", "/project/policies/password-rotation", {"enabled": True}, 400,
     "general_feature_unsupported"),
    ("session limit zero", "key", "PATCH", "/project/policies/session-limit", {"total": 0}, 400,
     "general_argument_invalid"),
    ("policy without scope", "weak", "PATCH", "/project/policies/user-limit", {"total": 5}, 401,
     "general_unauthorized_scope"),
    # variables and mock phones
    ("variable missing value", "key", "POST", "/project/variables", {"variableId": "unique()", "key": "K"}, 400,
     "general_argument_invalid"),
    ("variable key too long", "key", "POST", "/project/variables",
     {"variableId": "unique()", "key": "k" * 256, "value": "v"}, 400, "general_argument_invalid"),
    ("variable value too long", "key", "POST", "/project/variables",
     {"variableId": "unique()", "key": "K", "value": "v" * 8193}, 400, "general_argument_invalid"),
    ("variable duplicate key", "key", "POST", "/project/variables", {"variableId": "unique()", "key": "EXISTING",
                                                                     "value": "v"}, 409, "variable_already_exists"),
    ("variable get unknown", "key", "GET", "/project/variables/nope", None, 404, "variable_not_found"),
    ("variable unset secret", "key", "PUT", "/project/variables/existing", {"secret": False}, 400,
     "variable_cannot_unset_secret"),
    ("variable secret 'off'", "key", "PUT", "/project/variables/existing", {"secret": "off"}, 400,
     "general_argument_invalid"),
    ("variable delete unknown", "key", "DELETE", "/project/variables/nope", None, 404, "variable_not_found"),
    ("mock bad number", "key", "POST", "/project/mock-phones", {"number": "555", "otp": "123456"}, 400,
     "general_argument_invalid"),
    ("mock bad otp", "key", "POST", "/project/mock-phones", {"number": "+15550100", "otp": "12a456"}, 400,
     "general_argument_invalid"),
    # a final newline passed the patterns ("$" matches before it) and was stored, never matching again
    ("mock number newline", "key", "POST", "/project/mock-phones", {"number": "+15550100\n", "otp": "123456"}, 400,
     "general_argument_invalid"),
    ("mock otp newline", "key", "POST", "/project/mock-phones", {"number": "+15550100", "otp": "123456\n"}, 400,
     "general_argument_invalid"),
    ("platform hostname newline", "key", "POST", "/project/platforms/web",
     {"platformId": "unique()", "name": "w", "hostname": "a.test\n"}, 400, "general_argument_invalid"),
    ("webhook event newline", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "https://a.test", "name": "w", "events": ["users.*.create\n"]}, 400,
     "general_argument_invalid"),
    ("mock get unknown", "key", "GET", "/project/mock-phones/+15550199", None, 404, "mock_number_not_found"),
    ("mocks without scope", "weak", "GET", "/project/mock-phones", None, 401, "general_unauthorized_scope"),
    # OAuth2 providers
    ("oauth2 list", "key", "GET", "/project/oauth2", None, 200, None),
    ("oauth2 unsupported", "key", "GET", "/project/oauth2/amazon", None, 400, "project_provider_unsupported"),
    ("oauth2 bad endpoint", "key", "PATCH", "/project/oauth2/gitlab", {"endpoint": "not a url"}, 400,
     "general_argument_invalid"),
    *[(f"oauth2 microsoft tenant {v!r}", "key", "PATCH", "/project/oauth2/microsoft", {"tenant": v}, 400,
       "general_argument_invalid")
      for v in ("../x", "a/b", "common?x=1", "common\n", "contoso", "-bad.example.com", "1234-5678", "a b.com")],
    *[(f"oauth2 microsoft tenant ok {v!r}", "key", "PATCH", "/project/oauth2/microsoft", {"tenant": v}, 200, None)
      for v in ("common", "organizations", "consumers", "contoso.onmicrosoft.com",
                "72f988bf-86f1-41af-91ab-2d7cd011db47")],
    ("oauth2 native", "key", "PATCH", "/project/oauth2/google", {"nativeEnabled": True}, 400,
     "general_feature_unsupported"),
    ("oauth2 without scope", "weak", "GET", "/project/oauth2", None, 401, "general_unauthorized_scope"),
    # webhooks
    ("webhooks list", "key", "GET", "/webhooks", None, 200, None),
    ("webhook bad url", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "ftp://a.test", "name": "w", "events": ["users.*.create"]}, 400,
     "general_argument_invalid"),
    *[(f"webhook url {url!r}", "key", "POST", "/webhooks",
       {"webhookId": "unique()", "url": url, "name": "w", "events": ["users.*"]}, 400, "general_argument_invalid")
      for url in ("https://a.test:70000/hook", "https://a.test:0/hook", "https://a.test:x/hook",
                  "https://a.test/a hook", "https://a.test/hook\n", "https://a.test/\thook")],
    ("webhook update url with a space", "key", "PUT", "/webhooks/existing",
     {"name": "w", "url": "https://a.test/a b", "events": ["users.*"]}, 400, "general_argument_invalid"),
    ("webhook url with port", "key", "PUT", "/webhooks/existing",
     {"name": "w", "url": "https://a.test:8443/hook", "events": ["users.*"]}, 200, None),
    ("webhook bad event", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "https://a.test", "name": "w", "events": ["nothing.*"]}, 400,
     "general_argument_invalid"),
    ("webhook missing events", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "https://a.test", "name": "w"}, 400, "general_argument_invalid"),
    ("webhook short secret", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "https://a.test", "name": "w", "events": ["users.*"], "secret": "short"}, 400,
     "general_argument_invalid"),
    ("webhook too many events", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "https://a.test", "name": "w", "events": [f"users.u{i}" for i in range(101)]},
     400, "general_argument_invalid"),
    *[(f"webhook tls {v!r}", "key", "POST", "/webhooks",
       {"webhookId": "unique()", "url": "https://a.test", "name": "w", "events": ["users.*"], "tls": v}, 400,
       "general_argument_invalid") for v in ("off", "yes", 2)],
    ("webhook enabled 'off'", "key", "PUT", "/webhooks/existing",
     {"name": "w", "url": "https://a.test/hook", "events": ["users.*"], "enabled": "off"}, 400,
     "general_argument_invalid"),
    ("webhooks list total=false", "key", "GET", "/webhooks?total=false", None, 200, None),
    ("webhooks list total=off", "key", "GET", "/webhooks?total=off", None, 400, "general_argument_invalid"),
    ("webhook duplicate", "key", "POST", "/webhooks",
     {"webhookId": "existing", "url": "https://a.test", "name": "w", "events": ["users.*"]}, 409,
     "webhook_already_exists"),
    ("webhook get unknown", "key", "GET", "/webhooks/nope", None, 404, "webhook_not_found"),
    ("webhook update unknown", "key", "PUT", "/webhooks/nope",
     {"name": "w", "url": "https://a.test", "events": ["users.*"]}, 404, "webhook_not_found"),
    ("webhook secret unknown", "key", "PATCH", "/webhooks/nope/secret", {}, 404, "webhook_not_found"),
    ("webhook delete unknown", "key", "DELETE", "/webhooks/nope", None, 404, "webhook_not_found"),
    ("webhooks without scope", "weak", "GET", "/webhooks", None, 401, "general_unauthorized_scope"),
    ("webhooks as user", "user", "GET", "/webhooks", None, 401, "general_unauthorized_scope"),
    # values PostgreSQL refuses (NUL in text and JSON) written through Django's ORM: 400, not 500
    ("smtp host NUL", "key", "PATCH", "/project/smtp", {"host": "a\x00b", "port": 25}, 400, "general_argument_invalid"),
    ("template message NUL", "key", "PATCH", "/project/templates/email",
     {"templateId": "recovery", "locale": "fr", "subject": "ok", "message": "a\x00b"}, 400, "general_argument_invalid"),
    ("key get NUL", "key", "GET", "/project/keys/%00", None, 400, "general_argument_invalid"),
    ("platform name NUL", "key", "POST", "/project/platforms/web",
     {"platformId": "unique()", "name": "a\x00", "hostname": "a.test"}, 400, "general_argument_invalid"),
    ("platform fingerprint NUL", "key", "POST", "/project/platforms/android",
     {"platformId": "unique()", "name": "a", "applicationId": "a.b", "fingerprints": ["\x00"]}, 400,
     "general_argument_invalid"),
    ("variable value NUL", "key", "POST", "/project/variables", {"variableId": "unique()", "key": "NUL", "value": "\x00"},
     400, "general_argument_invalid"),
    ("variable update NUL", "key", "PUT", "/project/variables/existing", {"value": "\x00"}, 400,
     "general_argument_invalid"),
    ("webhook name NUL", "key", "POST", "/webhooks",
     {"webhookId": "unique()", "url": "https://a.test", "name": "a\x00", "events": ["users.*"]}, 400,
     "general_argument_invalid"),
    ("webhook update NUL", "key", "PUT", "/webhooks/existing",
     {"name": "w", "url": "https://a.test/\x00", "events": ["users.*"]}, 400, "general_argument_invalid"),
    ("webhook secret NUL", "key", "PATCH", "/webhooks/existing/secret", {"secret": "\x00" * 8}, 400,
     "general_argument_invalid"),
]


@pytest.fixture(scope="module")
def world(asgi_server, django_db_setup, django_db_blocker):
    project = make_project(django_db_blocker)
    api = Api(asgi_server, project)
    r = api.call("POST", "/project/variables", key=True,
                 json={"variableId": "existing", "key": "EXISTING", "value": "v"})
    assert r.status_code == 201, r.text
    r = api.call("POST", "/webhooks", key=True,
                 json={"webhookId": "existing", "url": "https://a.test/hook", "name": "w", "events": ["users.*"]})
    assert r.status_code == 201, r.text
    eph = api.call("POST", "/project/keys/ephemeral", key=True, json={"scopes": ["users.read"], "duration": 3600})
    assert eph.status_code == 201, eph.text
    _, session = api.signup()
    return api, eph.json()["secret"], session


def _snapshot(api: Api) -> list:
    out = []
    for path in ("/project", "/project/variables", "/project/platforms", "/webhooks", "/project/policies",
                 "/project/mock-phones", "/project/templates/email", "/project/oauth2"):
        r = api.call("GET", path, key=True)
        assert r.status_code == 200, r.text
        body = r.json()
        out.append(body)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_project_service_case(world, case):
    api, weak_key, session = world
    _, caller, method, path, body, status, kind = case
    headers = {"X-Appwrite-Key": weak_key} if caller == "weak" else None
    before = _snapshot(api) if status >= 400 else None
    r = api.call(method, path, json=body, key=caller == "key", session=session if caller == "user" else None,
                 headers=headers)
    assert r.status_code == status, r.text
    if kind:
        assert r.json()["type"] == kind, r.text
    if before is not None:
        assert _snapshot(api) == before


def test_total_from_the_query_string_takes_appwrites_loose_booleans(world):
    """A list's ``total`` travels in the query string: ``false``/``0`` skip the count, ``true``/``1``
    keep it (the web SDK sends ``total=false``)."""
    api = world[0]
    for value, counted in (("false", False), ("0", False), ("true", True), ("1", True)):
        r = api.call("GET", f"/webhooks?total={value}", key=True)
        assert r.status_code == 200, r.text
        assert (r.json()["total"] > 0) is counted and r.json()["webhooks"], (value, r.json())


@pytest.mark.parametrize("expire", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_key_expire_outside_years_1_to_9999_in_utc_is_refused(world, expire):
    """Python parses these dates, but their UTC time falls in year 10000 or year 0: PostgreSQL
    stored the first, and then neither the key's own answer, nor the key list, nor any request with
    that key could be read back (500 for each, the key beyond repair through the API)."""
    api = world[0]
    keys = api.call("GET", "/project/keys", key=True)
    assert keys.status_code == 200, keys.text
    key = keys.json()["keys"][0]
    r = api.call("PUT", f"/project/keys/{key['$id']}", key=True,
                 json={"name": key["name"], "scopes": key["scopes"], "expire": expire})
    assert r.status_code == 400, r.text
    assert r.json()["type"] == "general_argument_invalid" and "9999-12-31" in r.json()["message"], r.text
    after = api.call("GET", f"/project/keys/{key['$id']}", key=True)
    assert after.status_code == 200, after.text
    assert after.json()["expire"] == key["expire"]
    assert api.call("GET", "/project/keys", key=True).json()["keys"] == keys.json()["keys"]
