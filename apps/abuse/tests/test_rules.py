"""The rule table, its overrides, counter keys and the counters themselves (real Redis)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from types import SimpleNamespace

import pytest

from apps.abuse import rules
from apps.abuse.services import chunk_index, counter_key
from apps.core.drivers import kv
from apps.core.drivers.runtime import run_sync
from apps.core.http.auth import Auth
from conftest import ROOT

# Appwrite's defaults: name -> (limit, window seconds, key parts of the one counter)
APPWRITE_DEFAULTS = {
    "account.create": (10, 3600, ("url", "ip")),
    "account.session.email": (10, 3600, ("url", "email")),
    "account.session.anonymous": (50, 3600, ("ip",)),
    "account.session.update": (10, 3600, ("url", "ip")),
    "account.sessions.delete": (100, 3600, ("url", "ip")),
    "account.jwt": (120, 60, ("url", "userId")),
    "account.password": (10, 3600, ("url", "ip")),
    "account.oauth2": (50, 3600, ("url", "ip")),
    **{f"{f}.{a}": (120, 60, ("ip", "method", "url", "userId"))
       for f in ("rows", "documents") for a in ("create", "update", "upsert")},
    "rows.delete": (60, 60, ("ip", "method", "url", "userId")),
    "documents.delete": (60, 60, ("ip", "method", "url", "userId")),
    "files.create": (60, 60, ("ip", "method", "url", "userId", "chunkId")),
    "files.delete": (60, 60, ("ip", "method", "url", "userId")),
    "tokens.create": (60, 60, ("ip", "method", "url", "userId")),
    "tokens.update": (60, 60, ("ip", "method", "url", "userId")),
    "teams.membership.create": (10, 3600, ("url", "ip")),
    "executions.create": (0, 60, ("ip", "userId")),  # off as in Appwrite 1.4+; 1.0-1.3's keys
}
# The account lifecycle's rules (Appwrite account.php, MFA module): several counters each.
LIFECYCLE_DEFAULTS = {
    "account.verification": (10, 3600, (("url", "userId"),)),
    "account.verification.update": (10, 3600, (("url", "param.userId"),)),
    "account.verification.phone": (10, 3600, (("url", "userId"), ("url", "ip"))),
    "account.verification.phone.update": (10, 3600, (("param.userId",),)),
    "account.recovery": (10, 3600, (("url", "email"), ("url", "ip"))),
    "account.recovery.update": (10, 3600, (("url", "param.userId"),)),
    "account.token.magic-url": (60, 3600, (("url", "email"), ("url", "ip"))),
    "account.token.email": (10, 3600, (("url", "email"), ("url", "ip"))),
    "account.token.phone": (10, 3600, (("url", "param.phone"), ("url", "ip"))),
    "account.mfa.challenge": (10, 3600, (("url", "userId"),)),
    "account.mfa.challenge.update": (10, 3600, (("url", "param.challengeId"),)),
    # Appwrite's (ip, param.userId) and this server's per-user budget across every IP.
    "account.session.token": (10, 3600, (("ip", "param.userId"), ("param.userId",))),
}
# This server's rules for routes Appwrite leaves unlimited.
OWN_RULES = {
    "account.email": (10, 3600, (("url", "userId"),)),
}


# This project's own rules (no Appwrite counterpart): the Django admin's sign-in.
PROJECT_DEFAULTS = {
    "admin.login": (10, 900, (("ip",), ("param.username",))),
}


@pytest.mark.parametrize("name", sorted(PROJECT_DEFAULTS))
def test_project_rules(name):
    rule = rules.DEFAULT_RULES[name]
    assert (rule.limit, rule.window, rule.keys) == PROJECT_DEFAULTS[name]
    assert all(part in rules.KEY_PARTS for spec in rule.keys for part in spec)


@pytest.mark.parametrize("name", sorted(LIFECYCLE_DEFAULTS) + sorted(OWN_RULES))
def test_multi_counter_and_own_rules(name):
    rule = rules.DEFAULT_RULES[name]
    assert (rule.limit, rule.window, rule.keys) == {**LIFECYCLE_DEFAULTS, **OWN_RULES}[name]
    assert all(part in rules.KEY_PARTS for spec in rule.keys for part in spec)


@pytest.mark.parametrize("name", sorted(APPWRITE_DEFAULTS))
def test_default_table_matches_appwrite(name):
    rule = rules.DEFAULT_RULES[name]
    assert (rule.limit, rule.window, rule.keys) == (APPWRITE_DEFAULTS[name][0], APPWRITE_DEFAULTS[name][1],
                                                    (APPWRITE_DEFAULTS[name][2],))
    assert all(part in rules.KEY_PARTS for spec in rule.keys for part in spec)


def test_table_has_exactly_the_documented_rules():
    assert set(rules.DEFAULT_RULES) == (set(APPWRITE_DEFAULTS) | set(LIFECYCLE_DEFAULTS) | set(OWN_RULES)
                                        | set(PROJECT_DEFAULTS))
    for name in rules.DEFAULT_RULES:
        assert f"\n{name} " in rules.__doc__, f"{name} missing from the module docstring"


def test_fail_modes_and_reset():
    closed = {n for n, r in rules.DEFAULT_RULES.items() if r.fail_closed}
    assert closed == {"account.session.email", "account.password", "account.email", "account.session.token",
                      "account.verification.update", "account.verification.phone.update", "account.recovery.update",
                      "account.mfa.challenge.update", "admin.login"}
    assert rules.DEFAULT_RULES["account.session.token"].reset_on == {201}
    assert rules.DEFAULT_RULES["account.session.email"].reset_on == {201}


def test_every_endpoint_names_a_known_rule():
    from apps.abuse.apps import check_endpoint_rules
    from backend.urls import v1_router

    assert check_endpoint_rules() == []
    named = {ep.abuse for ep in v1_router.endpoints if ep.abuse}
    assert named >= {"account.create", "account.session.email", "account.session.anonymous", "account.jwt",
                     "account.sessions.delete", "account.session.update", "account.password"}


OVERRIDES = [
    # (name, multiplier, overrides, rule, expected (limit, window, fail_closed))
    ("defaults", 1.0, {}, "account.create", (10, 3600, False)),
    ("multiplier rounds up", 1.5, {}, "account.create", (15, 3600, False)),
    ("multiplier keeps at least one", 0.01, {}, "account.create", (1, 3600, False)),
    ("limit only", 1.0, {"account.create": {"limit": 3}}, "account.create", (3, 3600, False)),
    ("override beats multiplier", 10.0, {"account.jwt": {"limit": 5}}, "account.jwt", (5, 60, False)),
    ("multiplier applies to others", 10.0, {"account.jwt": {"limit": 5}}, "account.create", (100, 3600, False)),
    ("window only", 1.0, {"rows.create": {"window": 2}}, "rows.create", (120, 2, False)),
    ("limit zero turns off", 1.0, {"files.create": {"limit": 0}}, "files.create", (0, 60, False)),
    ("fail open", 1.0, {"account.session.email": {"fail": "open"}}, "account.session.email", (10, 3600, False)),
    ("fail closed", 1.0, {"rows.delete": {"fail": "closed"}}, "rows.delete", (60, 60, True)),
]


@pytest.mark.parametrize("name,mult,overrides,rule,expected", OVERRIDES, ids=[c[0] for c in OVERRIDES])
def test_overrides(name, mult, overrides, rule, expected):
    r = rules.apply_overrides(rules.DEFAULT_RULES, mult, overrides)[rule]
    assert (r.limit, r.window, r.fail_closed) == expected


def test_unknown_override_is_refused():
    with pytest.raises(KeyError, match="nope"):
        rules.apply_overrides(rules.DEFAULT_RULES, 1.0, {"nope": {"limit": 1}})


BAD_ENV = [
    # (name, environment, message fragment): each must stop startup with a clear message
    ("not json", {"ABUSE_LIMITS": "{account.create: 3}"}, "ABUSE_LIMITS must be a JSON object"),
    ("json list", {"ABUSE_LIMITS": "[1, 2]"}, "JSON object keyed by rule name"),
    ("unknown rule", {"ABUSE_LIMITS": '{"account.creat": 3}'}, "unknown abuse rule"),
    ("negative limit", {"ABUSE_LIMITS": '{"account.create": -1}'}, "limit must be an integer >= 0"),
    ("negative limit in object", {"ABUSE_LIMITS": '{"account.create": {"limit": -1}}'}, "limit must be an integer >= 0"),
    ("zero window", {"ABUSE_LIMITS": '{"account.create": {"window": 0}}'}, "window must be an integer >= 1"),
    ("float window", {"ABUSE_LIMITS": '{"account.create": {"window": 1.5}}'}, "window must be an integer >= 1"),
    ("boolean limit", {"ABUSE_LIMITS": '{"account.create": {"limit": true}}'}, "limit must be an integer"),
    ("unknown field", {"ABUSE_LIMITS": '{"account.create": {"limt": 3}}'}, "object of limit/window/fail"),
    ("empty object", {"ABUSE_LIMITS": '{"account.create": {}}'}, "object of limit/window/fail"),
    ("bad fail mode", {"ABUSE_LIMITS": '{"account.create": {"fail": "maybe"}}'}, "fail must be"),
    ("zero multiplier", {"ABUSE_LIMIT_MULTIPLIER": "0"}, "ABUSE_LIMIT_MULTIPLIER must be > 0"),
    ("text multiplier", {"ABUSE_LIMIT_MULTIPLIER": "lots"}, "ABUSE_LIMIT_MULTIPLIER must be a number"),
    ("bad switch", {"ABUSE_ENABLED": "sometimes"}, "ABUSE_ENABLED must be a boolean"),
]


@pytest.mark.parametrize("name,env,message", BAD_ENV, ids=[c[0] for c in BAD_ENV])
def test_bad_configuration_stops_startup(name, env, message):
    proc = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "backend.settings", **env},
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode != 0
    assert "ImproperlyConfigured" in proc.stderr and message in proc.stderr, proc.stderr[-2000:]


CHUNKS = [
    ("", 0), ("bytes 0-5242879/12000000", 0), ("bytes 5242880-10485759/12000000", 1),
    ("bytes 10485760-11999999/12000000", 2), ("bytes 7-7/8", 0), ("bytes 5-1/10", 0), ("items 0-9/10", 0), ("garbage", 0),
    ("bytes -5-9/10", 0), ("bytes a-b/c", 0),
]


@pytest.mark.parametrize("header,index", CHUNKS)
def test_chunk_index(header, index):
    assert chunk_index(header) == index


def _ctx(**kw):
    base = dict(project_id="p7", endpoint=SimpleNamespace(path="/account/sessions/email"), client_ip="10.0.0.1",
                auth=Auth(), method="POST", raw_params={}, headers={})
    base.update(kw)
    return SimpleNamespace(**base)


KEYS = [
    # (name, context a, context b, same counter?)
    ("email case and spaces", {"raw_params": {"email": "Ada@Example.com "}}, {"raw_params": {"email": "ada@example.com"}}, True),
    ("different emails", {"raw_params": {"email": "a@x.io"}}, {"raw_params": {"email": "b@x.io"}}, False),
    ("missing email vs empty", {"raw_params": {}}, {"raw_params": {"email": ""}}, True),
    ("ip ignored by the email rule", {"client_ip": "1.1.1.1"}, {"client_ip": "2.2.2.2"}, True),
    ("projects are separate", {"project_id": "a"}, {"project_id": "b"}, False),
]


@pytest.mark.parametrize("name,a,b,same", KEYS, ids=[c[0] for c in KEYS])
def test_counter_keys(name, a, b, same):
    rule = rules.DEFAULT_RULES["account.session.email"]
    ka, kb = (counter_key(_ctx(**x), rule, rule.keys[0]) for x in (a, b))
    assert (ka == kb) is same
    assert ka.startswith("abuse:") and len(ka) < 100


def test_memory_windows_expire_and_peek():
    store = kv.Memory()
    assert run_sync(store.hit_windows(["k"], 60, 0)) == [(0, 60000)]
    assert [c for c, _ in run_sync(store.hit_windows(["k", "j"], 60))] == [1, 1]
    assert run_sync(store.hit_windows(["k"], 60))[0][0] == 2
    assert run_sync(store.hit_windows(["k"], 60, 0))[0][0] == 2
    store._data["k"] = (b"2", 0.0)  # expired
    assert run_sync(store.hit_windows(["k"], 60))[0][0] == 1


def test_memory_give_back_never_creates_a_counter():
    store = kv.Memory()
    assert run_sync(store.hit_windows(["k"], 60, -1))[0][0] == 0
    assert "k" not in store._data
    run_sync(store.hit_windows(["k"], 60, 2))
    assert run_sync(store.hit_windows(["k"], 60, -1))[0][0] == 1
    assert run_sync(store.hit_windows(["k"], 60, 0))[0][0] == 1


def test_memory_sweeps_expired_keys():
    store = kv.Memory()
    store.SWEEP_EVERY = 10
    for i in range(9):
        run_sync(store.hit_windows([f"old{i}"], 60))
        store._data[f"old{i}"] = (b"1", 0.0)
    run_sync(store.hit_windows(["new"], 60))
    assert list(store._data) == ["new"]


@pytest.fixture
def redis_url():
    from django.conf import settings

    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL")
    return settings.REDIS_URL


def test_redis_sync_counter_has_ttl_and_peek_does_not_count(redis_url):
    import redis

    store = kv.RedisSync(redis_url)
    key = f"abuse:test:{uuid.uuid4().hex}"
    assert run_sync(store.hit_windows([key], 60, 0)) == [(0, 60000)]
    assert redis.Redis.from_url(redis_url).exists(key) == 0
    (count, left), = run_sync(store.hit_windows([key], 60))
    assert count == 1 and 59000 < left <= 60000
    assert 0 < redis.Redis.from_url(redis_url).pttl(key) <= 60000
    run_sync(store.delete(key))


@pytest.mark.parametrize("client", ["sync", "async"])
def test_redis_give_back_keeps_the_window_and_never_creates_a_counter(redis_url, client):
    """A negative ``add`` takes back hits (the admin's throttle returns the reservation of a
    sign-in that did not fail); on a missing key it reads 0 and writes nothing."""
    import redis

    async def main():
        store = kv.RedisSync(redis_url) if client == "sync" else kv.RedisAsync(redis_url)
        key = f"abuse:test:{uuid.uuid4().hex}"
        try:
            missing = await store.hit_windows([key], 60, -1)
            exists = redis.Redis.from_url(redis_url).exists(key)
            await store.hit_windows([key], 60, 3)
            back = await store.hit_windows([key], 60, -1)
            ttl = redis.Redis.from_url(redis_url).pttl(key)
            await store.delete(key)
        finally:
            await store.close()
        return missing, exists, back, ttl

    missing, exists, back, ttl = asyncio.run(main())
    assert missing == [(0, 60000)] and exists == 0
    assert back[0][0] == 2 and 0 < ttl <= 60000


def test_redis_async_concurrent_hits_are_exact(redis_url):
    """200 concurrent increments on the async client: every count from 1 to 200 exactly once."""

    async def main():
        store = kv.RedisAsync(redis_url)
        key = f"abuse:test:{uuid.uuid4().hex}"
        try:
            results = await asyncio.gather(*(store.hit_windows([key], 60) for _ in range(200)))
            await store.delete(key)
        finally:
            await store.close()
        return sorted(r[0][0] for r in results)

    assert asyncio.run(main()) == list(range(1, 201))


def test_store_health_pauses_and_logs_once_per_interval(settings, caplog):
    """After a store error the check skips the store for ABUSE_KV_RETRY_SECONDS; warnings are
    rate-limited; recovery is logged once."""
    from apps.abuse.services import _StoreHealth

    settings.ABUSE_KV_RETRY_SECONDS = 0.2
    settings.ABUSE_LOG_INTERVAL = 3600
    rule = rules.DEFAULT_RULES["account.create"]
    health = _StoreHealth()
    with caplog.at_level("WARNING", logger="apps.abuse"):
        for _ in range(50):
            health.failed(kv.KVUnavailable("refused"), rule)
        assert health.skipping()
        time.sleep(0.25)
        assert not health.skipping()
        health.succeeded()
        health.succeeded()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "unavailable" in lines[0] and "refused" in lines[0]
    assert "reachable again" in lines[1]
