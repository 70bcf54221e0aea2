"""Conformance: the official Node.js server SDK (npm ``node-appwrite`` 26, the Appwrite 1.9 line)
with an API key, end to end against the live server: TablesDB (with a transaction), Users and
Teams, Storage (a chunked upload the SDK sends in parallel), Functions, Messaging, and the Project
and Webhooks services. Each service is one ES module ``tests/websdk/node_<service>.mjs`` that
prints what it saw; the assertions are here."""

from __future__ import annotations

import json

import pytest

from apps.functions.tests.conftest import targz
from tests.websdk import require_node, run_node


def _run(server, project, script: str, *args: str) -> dict:
    require_node("node-appwrite")
    proc = run_node(script, server.endpoint, project.id, project.key, *args, timeout=90)
    assert proc.returncode == 0, f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_tablesdb(request, kind, project):
    out = _run(request.getfixturevalue(f"{kind}_server"), project, "node_tablesdb.mjs")
    assert out["database"] == {"name": "node", "enabled": True}
    assert out["table"] == {"name": "tasks", "permissions": ['read("any")'], "rowSecurity": False}
    assert out["columns"] == [["title", "varchar", "available"], ["qty", "integer", "available"],
                              ["done", "boolean", "available"]]
    assert out["index"] == {"key": "by_qty", "type": "key", "columns": ["qty"]}
    assert out["created"] == {"id": "a", "title": "alpha", "qty": 5, "done": False, "tableId": out["created"]["tableId"],
                              "databaseId": out["created"]["databaseId"], "permissions": []}
    assert out["bulk"] == ["b", "c"]
    assert out["greaterOrdered"] == ["gamma", "beta"]
    assert out["equal"] == ["gamma"]
    assert out["page"] == ["beta"]
    assert out["startsWith"] == ["alpha"]
    assert out["between"] == ["beta", "gamma"]
    assert out["or"] == ["alpha", "gamma"]
    assert out["selectedKeys"] == ["title"] and out["total"] == 3
    assert out["got"] == "gamma"
    assert (out["updated"], out["upserted"], out["incremented"]) == (6, "delta", 9)
    assert out["deletedRow"] == "404 row_not_found"
    assert out["missingTitle"] == "400 row_invalid_structure"
    assert out["tooBig"] == "400 row_invalid_structure"
    assert out["transaction"] == "pending" and out["staged"] == 3
    assert out["beforeCommit"] == ["alpha", "delta", "gamma"]
    assert out["committed"] == "committed"
    assert out["afterCommit"] == ["alpha, changed", "delta", "from a transaction"]
    assert out["rolledBack"] == "failed" and out["afterRollback"] == out["afterCommit"]
    assert out["bulkDeleted"] == 1 + 1  # delta (2) and the transaction's row (default qty 1)
    assert out["tablesListed"] == ["tasks"] and out["renamed"] == "jobs"
    assert out["deletedTable"] == "404 table_not_found"
    assert out["deletedDatabase"] == "404 database_not_found"


def test_users_and_teams(asgi_server, project):
    out = _run(asgi_server, project, "node_users_teams.mjs")
    user = out["user"]
    assert user["name"] == "Node User" and user["status"] is True and user["labels"] == []
    assert user["emailVerification"] is False and user["hasPassword"] is True
    assert out["listed"] == {"total": 1, "ids": [True]} and out["searched"] is True
    assert out["got"] == user["email"]
    assert out["renamed"] == "Renamed" and out["labels"] == ["vip", "beta"]
    assert out["prefs"] == out["prefsRead"] == {"theme": "dark"}
    assert out["blocked"] is False
    assert out["duplicate"] == "409 user_already_exists"
    assert out["team"] == {"name": "Crew", "total": 0}
    assert out["teamsListed"] == [True] and out["teamRenamed"] == "Crew 2"
    assert out["teamPrefs"] == out["teamPrefsRead"] == {"plan": "pro"}
    assert out["membership"] == {"userId": True, "roles": ["editor"], "confirm": True, "teamName": "Crew 2"}
    assert out["memberships"] == [["editor"]] and out["memberTeams"] == [True]
    assert out["roleChanged"] == ["admin"] and out["teamGot"] == 1
    assert out["membersAfterDelete"] == 0
    assert out["deletedTeam"] == "404 team_not_found"
    assert out["deletedUser"] == "404 user_not_found"


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_storage(request, kind, project):
    out = _run(request.getfixturevalue(f"{kind}_server"), project, "node_storage.mjs")
    assert out["bucket"] == {"name": "node", "maximumFileSize": 20 * 1024 * 1024, "allowedFileExtensions": ["txt", "bin"]}
    text = "hello from node-appwrite 26\n"
    assert out["small"] == {"name": "hello.txt", "sizeOriginal": len(text), "mimeType": "text/plain",
                            "chunksTotal": 1, "chunksUploaded": 1}
    assert out["smallDownloaded"] == out["smallViewed"] == text
    assert out["big"] == {"sizeOriginal": 12 * 1024 * 1024 + 123, "chunksTotal": 3, "chunksUploaded": 3,
                          "progress": 3, "same": True}
    assert out["listed"] == ["big.bin", "hello.txt"] and out["found"] == 1
    assert out["renamed"] == "renamed.txt"
    assert out["refusedExtension"] == "400 storage_file_type_unsupported"
    assert out["deletedFile"] == "404 storage_file_not_found"
    assert out["buckets"] is True
    assert out["deletedBucket"] == "404 storage_bucket_not_found"


def test_functions(asgi_server, project, tmp_path):
    code = tmp_path / "code.tar.gz"
    code.write_bytes(targz({"index.js": "export default async ({ res }) => res.text('hi');\n"}))
    out = _run(asgi_server, project, "node_functions.mjs", str(code))
    assert out["runtimes"] == ["node-20.0", "python-3.13"]
    assert out["specifications"] >= 1
    assert out["created"] == {"name": "node-fn", "runtime": "node-20.0", "execute": ["users"],
                              "events": ["users.*.create"], "schedule": "0 * * * *", "timeout": 10,
                              "enabled": True, "entrypoint": "index.js"}
    assert out["listed"] == 1 and out["got"] == "0 * * * *"
    assert out["updated"] == {"name": "node-fn-2", "enabled": False, "runtime": "node-20.0"}
    assert out["variable"] == {"key": "GREETING", "value": "hi", "secret": False} and out["variables"] == 1
    assert out["deployment"] == {"resourceId": True, "sourceSize": code.stat().st_size, "entrypoint": "index.js"}
    assert out["deployments"] == 1 and out["downloadedSame"] is True
    assert out["deleted"] == "404 function_not_found"
    assert out["badRuntime"] == "404 function_runtime_unsupported"  # Appwrite answers 404 for it too


def test_messaging(asgi_server, project):
    out = _run(asgi_server, project, "node_messaging.mjs")
    assert out["smtp"] == {"type": "email", "provider": "smtp", "enabled": True, "host": "smtp.example.com",
                           "passwordShown": False}
    assert out["sms"] == {"type": "sms", "provider": "twilio", "options": {"from": "+15550001111"}}
    assert out["providers"] == ["Mail", "SMS"] and out["emailProviders"] == 1
    assert out["smtpUpdated"] == 2626
    assert out["topic"] == {"name": "news", "subscribe": ["users"], "emailTotal": 0}
    assert out["topics"] == 1 and out["topicRenamed"] == "updates"
    assert out["target"] == {"providerType": "email", "name": "Inbox"}
    assert out["subscriber"] == {"targetId": True, "userId": True}
    assert out["subscribers"] == 1 and out["topicEmailTotal"] == 1
    assert out["wrongType"] == "400 provider_incorrect_type"
    assert out["deletedTopic"] == "404 topic_not_found"
    assert out["deletedProvider"] == "404 provider_not_found"


def test_project_and_webhooks(asgi_server, project):
    out = _run(asgi_server, project, "node_project_webhooks.mjs")
    assert out["project"] == {"sameId": True}
    assert out["labels"] == ["node", "sdk"] and out["anonymous"] is False
    assert out["platform"] == {"type": "web", "hostname": "app.example.test", "name": "Site"}
    assert out["platformUpdated"] == "other.example.test" and out["platforms"] == [True]
    assert out["deletedPlatform"] == "404 platform_not_found"
    assert out["keyCreation"] == "403 key_creation_denied"
    assert out["ephemeral"] == {"scopes": ["users.read"], "prefix": "ephemeral"}
    assert out["ephemeralReads"] is True and out["ephemeralWrites"] == "401 general_unauthorized_scope"
    assert out["keys"] == 1  # ephemeral keys are not listed
    assert out["keyUpdated"] == out["keyGot"] == "renamed"
    assert out["missingKey"] == "404 key_not_found"
    assert out["policies"] >= 14 and out["passwordHistory"] == 5
    assert out["variable"] == {"key": "API_URL", "value": "https://example.test", "secret": False}
    assert out["variableUpdated"] == "https://changed.test" and out["variables"] == 1
    assert out["mockPhone"] == "123456" and out["mockPhones"] == 1
    assert out["webhook"] == {"name": "Audit", "url": "http://127.0.0.1:9/hook",
                              "events": ["users.*.create", "tablesdb.*.tables.*.rows.*"], "enabled": True,
                              "tls": False, "secretShown": True}
    assert out["webhooks"] == [True]
    assert out["webhookUpdated"] == {"name": "Audit 2", "url": "https://hooks.example.test/in", "events": ["teams.*"],
                                     "enabled": False}
    assert out["secretRotated"] is True and out["webhookGot"] == "Audit 2"
    assert out["badEvent"] == "400 general_argument_invalid"
    assert out["deletedWebhook"] == "404 webhook_not_found"
