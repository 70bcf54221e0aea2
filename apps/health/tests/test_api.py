"""Every Health route over HTTP, on the three builds, against real local peers: an SNTP
responder, TLS servers with generated certificates, a clamd responder, PostgreSQL, Redis and the
file storage."""

from __future__ import annotations

import time

import pytest
import requests

from apps.health.queues import FAILED_NAMES, QUEUES, served
from conftest import Api

# A queue the worker runs answers its size; any other says it is not run here (503).
QUEUE_CASES = [(f"/health/queue/{q}", *((200, None) if q in served() else (503, "general_service_disabled")))
               for q in QUEUES]
FAILED_CASES = [(f"/health/queue/failed/{n}", *((200, None) if q in served() else (503, "general_service_disabled")))
                for n, q in FAILED_NAMES.items()]

CASES = [
    # (id, path, status, type)
    ("health", "/health", 200, None),
    ("db", "/health/db", 200, None),
    ("audits db", "/health/audits-db", 200, None),
    ("cache", "/health/cache", 200, None),
    ("pubsub", "/health/pubsub", 200, None),
    ("time", "/health/time", 200, None),
    ("storage", "/health/storage", 200, None),
    ("storage local", "/health/storage/local", 200, None),
    ("anti-virus", "/health/anti-virus", 200, None),
    ("stats", "/health/stats", 200, None),
    ("certificate", "/health/certificate?domain=localhost", 200, None),
    ("certificate from url", "/health/certificate?domain=https://localhost/path", 200, None),
    ("certificate missing domain", "/health/certificate", 400, "general_argument_invalid"),
    ("certificate bad domain", "/health/certificate?domain=not a domain", 400, "general_argument_invalid"),
    ("certificate ftp url", "/health/certificate?domain=ftp://localhost", 400, "general_argument_invalid"),
    ("certificate refused", "/health/certificate?domain=127.0.0.2", 404, "health_invalid_host"),
    ("certificate expired", "/health/certificate?domain=127.0.0.3", 404, "health_certificate_expired"),
    *[(f"queue {p}", p, status, etype) for p, status, etype in QUEUE_CASES],
    ("queue threshold 0 is hit", "/health/queue/mails?threshold=0", 503, "health_queue_size_exceeded"),
    ("queue threshold not int", "/health/queue/mails?threshold=many", 400, "general_argument_invalid"),
    ("queue threshold negative", "/health/queue/mails?threshold=-1", 400, "general_argument_invalid"),
    ("queue undeclared param ignored", "/health/queue/mails?name=x", 200, None),
    ("queue unknown", "/health/queue/nope", 404, "general_route_not_found"),
    *[(f"failed {p}", p, status, etype) for p, status, etype in FAILED_CASES],
    ("failed unknown name", "/health/queue/failed/mails", 400, "general_argument_invalid"),
    ("failed threshold hit", "/health/queue/failed/v1-mails?threshold=0", 503, "health_queue_size_exceeded"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_routes(svc_server, project, case):
    _, path, status, etype = case
    api = Api(svc_server, project)
    r = api.call("GET", path, key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    if status == 404 and etype == "general_route_not_found":
        return
    guest = api.call("GET", path)
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope"


def test_version_is_public(svc_server):
    r = requests.get(svc_server.endpoint + "/health/version", timeout=10)
    assert r.status_code == 200 and r.json()["version"]


def test_models(svc_api: Api, tls_peers, sql):
    call = lambda path: svc_api.call("GET", path, key=True).json()  # noqa: E731
    assert call("/health") == {"name": "http", "ping": 0, "status": "pass"}
    for path, name in (("/health/db", "database"), ("/health/audits-db", "audits"), ("/health/cache", "cache"),
                       ("/health/pubsub", "pubsub")):
        body = call(path)
        assert body["total"] == 1 and body["statuses"][0]["name"] == name
        assert body["statuses"][0]["status"] == "pass" and isinstance(body["statuses"][0]["ping"], int)
    for path in ("/health/storage", "/health/storage/local"):
        body = call(path)
        assert body["status"] == "pass" and isinstance(body["ping"], int)
    assert call("/health/anti-virus") == {"version": "ClamAV 1.4.2/27500/Mon Jan  5 09:00:00 2026", "status": "pass"}
    cert = call("/health/certificate?domain=localhost")
    assert cert["subjectSN"] == "localhost" and cert["issuerOrganisation"] == "Peer Test Org"
    assert cert["signatureTypeSN"] == "ecdsa-with-SHA256" and "CN=localhost" in cert["name"]
    assert int(cert["validFrom"]) < time.time() < int(cert["validTo"])
    # The queue's true depth, read from the task table: earlier tests on this worker may have
    # queued mails that no worker sends here, so the size is not always 0.
    waiting, failed = sql("SELECT count(*) FILTER (WHERE status IN ('READY', 'RUNNING')), "
                          "count(*) FILTER (WHERE status = 'FAILED') FROM django_tasks_database_dbtaskresult "
                          "WHERE queue_name = 'mails'")[0]
    assert call("/health/queue/mails") == {"size": waiting}
    assert call("/health/queue/failed/v1-mails") == {"size": failed}
    for path in ("/health/queue/builds", "/health/queue/failed/v1-builds"):
        body = call(path)
        assert body["code"] == 503 and body["type"] == "general_service_disabled"
        assert body["message"].startswith("This server runs no `builds` queue") and "mails" in body["message"]
    stats = call("/health/stats")
    assert set(stats) == {"storage", "cache"} and stats["storage"]["partitionTotal"].endswith("B")
    assert stats["cache"]["clients"] >= 1


def test_time_against_the_ntp_peer(svc_server, project, ntp_peer):
    api = Api(svc_server, project)
    asked = ntp_peer.asked
    body = api.call("GET", "/health/time", key=True).json()
    assert ntp_peer.asked > asked
    assert abs(body["diff"]) <= 1 and abs(body["localTime"] - time.time()) < 30
    assert body["remoteTime"] - body["localTime"] == body["diff"]


def test_time_gap_and_silence_fail_fast(svc_api: Api, ntp_peer):
    try:
        ntp_peer.offset = 3600
        r = svc_api.call("GET", "/health/time", key=True)
        assert r.status_code == 500 and r.json()["type"] == "general_server_error"
        assert r.json()["message"] == "Server time gaps detected"
        ntp_peer.offset = 0
        ntp_peer.silent = True
        started = time.monotonic()
        r = svc_api.call("GET", "/health/time", key=True)
        assert r.status_code == 500 and r.json()["type"] == "general_server_error"
        assert "no answer" in r.json()["message"]
        assert time.monotonic() - started < 10  # HEALTH_NTP_TIMEOUT is 1 s here
    finally:
        ntp_peer.offset = 0
        ntp_peer.silent = False


def test_defaults_without_peers(api: Api):
    """The plain servers: antivirus disabled; the default NTP server cannot be reached from this
    network-less machine, which is a clear 500, not a hang."""
    assert api.call("GET", "/health/anti-virus", key=True).json() == {"version": "", "status": "disabled"}
    started = time.monotonic()
    r = api.call("GET", "/health/time", key=True)
    assert r.status_code == 500 and r.json()["type"] == "general_server_error"
    assert time.monotonic() - started < 30


def test_queue_sizes_are_the_task_queues(api):
    """A background delete is queued on ``deletes`` (no worker for that queue runs here): the
    health route counts it."""
    def size():
        r = api.call("GET", "/health/queue/deletes", key=True)
        assert r.status_code == 200, r.text
        return r.json()["size"]

    db = api.call("POST", "/tablesdb", key=True, json={"databaseId": "unique()", "name": "kept"}).json()["$id"]
    table = api.call("POST", f"/tablesdb/{db}/tables", key=True, json={"tableId": "unique()", "name": "gone"})
    assert table.status_code == 201, table.text
    before = size()
    assert api.call("DELETE", f"/tablesdb/{db}/tables/{table.json()['$id']}", key=True).status_code == 204
    assert size() >= before + 1
