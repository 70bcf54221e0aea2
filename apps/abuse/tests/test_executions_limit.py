"""``executions.create``: off by default (Appwrite 1.4+ has no limit on executions); set through
``ABUSE_LIMITS`` it counts per client IP and user across every function of the project, and API
keys are never limited."""

from __future__ import annotations

import time

from apps.abuse.tests.conftest import cookieless
from apps.functions.tests.conftest import make_function


def test_executions_are_not_limited_by_default(api):
    fid = make_function(api, execute=["any"])["$id"]
    for _ in range(70):  # more than Appwrite 1.0-1.3's 60; each 503 (no engine on the session server)
        r = api.call("POST", f"/functions/{fid}/executions", json={})
        assert r.status_code == 503 and "X-RateLimit-Limit" not in r.headers, r.text


def test_a_limit_set_in_abuse_limits_counts_per_ip_and_user_across_functions(dedicated, project):
    api = cookieless(dedicated("asgi", ABUSE_LIMITS={"executions.create": 60}), project)
    fid = make_function(api, execute=["any"])["$id"]
    for i in range(60):  # counted although each answers 503 (no engine): the check runs first
        r = api.call("POST", f"/functions/{fid}/executions", json={})
        assert r.status_code == 503 and r.headers["X-RateLimit-Remaining"] == str(59 - i), (i, r.text)
    other = make_function(api, execute=["any"])["$id"]
    for target in (fid, other):
        r = api.call("POST", f"/functions/{target}/executions", json={"body": "x"})
        assert r.status_code == 429 and r.json()["type"] == "general_rate_limit_exceeded", r.text
        assert r.headers["X-RateLimit-Limit"] == "60" and r.headers["X-RateLimit-Remaining"] == "0"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
        assert int(r.headers["X-RateLimit-Reset"]) >= int(time.time())
    _, session = api.signup()
    user = api.call("POST", f"/functions/{fid}/executions", json={}, session=session)
    assert user.status_code == 503 and user.headers["X-RateLimit-Remaining"] == "59"  # a budget of its own
    key = api.call("POST", f"/functions/{fid}/executions", json={}, key=True)
    assert key.status_code == 503
