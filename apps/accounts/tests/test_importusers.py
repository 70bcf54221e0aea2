"""``manage.py importusers``: Firebase, Supabase/GoTrue and Appwrite exports, JSON and CSV; the
imported users sign in with their old passwords; bad records are refused with a reason and
nothing half made."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import argon2
import bcrypt

from conftest import ROOT, Api, make_project

FIREBASE_KEY = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
# The sample export line of Firebase's firebase/scrypt README (password "user1password").
FIREBASE_CSV = ("kYi4EvWQlQTKSfnJ3dRSP6IH3ed2,user1@test.com,false,"
                "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==,"
                "42xEC+ixf3L2lw==,Test User 1,,,,,,,,,,,,,,,,,,1486324831360,,\n")


def _run(live_env, project: str, path, fmt: str, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "importusers", project, str(path), "--format", fmt,
                           "--no-progress", *extra], cwd=ROOT, env=live_env, capture_output=True, text=True,
                          timeout=120)


def _signs_in(api: Api, email: str, password: str) -> bool:
    return api.call("POST", "/account/sessions/email", json={"email": email, "password": password}).status_code == 201


def test_firebase_csv_with_the_published_sample(api: Api, live_env, tmp_path):
    path = tmp_path / "users.csv"
    path.write_text(FIREBASE_CSV + "bad id!,x@test.com,false,,,X,,,,,,,,,,,,,,,,,,,,\n")
    out = _run(live_env, api.project.id, path, "firebase", "--firebase-signer-key", FIREBASE_KEY,
               "--firebase-salt-separator", "Bw==")
    assert out.returncode == 0, out.stderr
    assert "Imported 1 user(s)" in out.stdout and "refused 1" in out.stdout
    assert "record 2 (bad id!): invalid user ID" in out.stdout
    user = api.call("GET", "/users/kYi4EvWQlQTKSfnJ3dRSP6IH3ed2", key=True).json()
    assert user["email"] == "user1@test.com" and user["name"] == "Test User 1" and user["hash"] == "scryptMod"
    assert user["registration"].startswith("2017-02-05")
    assert _signs_in(api, "user1@test.com", "user1password")
    assert api.call("GET", "/users/kYi4EvWQlQTKSfnJ3dRSP6IH3ed2", key=True).json()["hash"] == "argon2"


def test_firebase_hash_without_parameters_is_refused(api: Api, live_env, tmp_path):
    path = tmp_path / "users.json"
    path.write_text(json.dumps({"users": [{"localId": "fb1", "email": "fb1@test.com", "passwordHash": "aGFzaA==",
                                           "salt": "c2FsdA=="}]}))
    out = _run(live_env, api.project.id, path, "firebase")
    assert out.returncode == 0 and "Imported 0 user(s)" in out.stdout and "hash parameters were not given" in out.stdout
    assert api.call("GET", "/users/fb1", key=True).status_code == 404


def test_supabase_json_and_csv(api: Api, live_env, tmp_path):
    pw = "supa-secret-1"
    rows = [
        {"id": "8d3c1c4e-0c3e-4a7e-9a35-2f1f0a3b1c01", "email": "Supa@Example.com",
         "encrypted_password": bcrypt.hashpw(pw.encode(), bcrypt.gensalt(6)).decode().replace("$2b$", "$2a$", 1),
         "email_confirmed_at": "2024-01-02T03:04:05Z", "phone": "15550101010", "created_at": "2024-01-01T00:00:00Z",
         "raw_user_meta_data": json.dumps({"full_name": "Supa Base"})},
        {"id": "8d3c1c4e-0c3e-4a7e-9a35-2f1f0a3b1c02", "email": "supa@example.com", "encrypted_password": ""},
        {"id": "8d3c1c4e-0c3e-4a7e-9a35-2f1f0a3b1c03", "email": "x@example.com", "encrypted_password": "not-bcrypt"},
    ]
    path = tmp_path / "auth_users.json"
    path.write_text(json.dumps(rows))
    refused = tmp_path / "refused.csv"
    out = _run(live_env, api.project.id, path, "supabase", "--refused-file", str(refused))
    assert out.returncode == 0, out.stderr
    assert "Imported 1 user(s)" in out.stdout and "refused 2" in out.stdout
    assert "is already taken" in out.stdout and "password hash refused" in out.stdout
    assert len(refused.read_text().strip().splitlines()) == 3
    user = api.call("GET", f"/users/{rows[0]['id']}", key=True).json()
    assert user["name"] == "Supa Base" and user["phone"] == "+15550101010" and user["emailVerification"] is True
    assert _signs_in(api, "supa@example.com", pw)
    csv_path = tmp_path / "auth_users.csv"
    digest = bcrypt.hashpw(b"csv-pass-123", bcrypt.gensalt(6)).decode()
    csv_path.write_text("id,email,encrypted_password,email_confirmed_at,phone\n"
                        f"csv-user-1,csv@example.com,{digest},,\n")
    out = _run(live_env, api.project.id, csv_path, "supabase")
    assert "Imported 1 user(s)" in out.stdout, out.stdout + out.stderr
    assert _signs_in(api, "csv@example.com", "csv-pass-123")


def test_appwrite_export_round_trip(api: Api, live_env, tmp_path, django_db_blocker):
    pw = "appwrite-pass-1"
    users = {"total": 3, "users": [
        {"$id": "aw-argon", "email": "argon@example.com", "name": "A", "password": argon2.PasswordHasher().hash(pw),
         "hash": "argon2", "hashOptions": {"type": "argon2"}, "labels": ["vip"], "prefs": {"x": 1}, "status": True,
         "emailVerification": True, "phone": "", "phoneVerification": False},
        {"$id": "aw-sha", "email": "sha@example.com", "password": hashlib.sha512(pw.encode()).hexdigest(),
         "hash": "sha", "hashOptions": {"type": "sha", "version": "sha512"}},
        {"$id": "aw-scrypt", "email": "scrypt@example.com",
         "password": hashlib.scrypt(pw.encode(), salt=b"NaCl", n=16, r=8, p=1, dklen=32).hex(), "hash": "scrypt",
         "hashOptions": {"type": "scrypt", "costCpu": 16, "costMemory": 8, "costParallel": 1, "length": 32,
                         "salt": "NaCl"}},
        {"$id": "aw-bad", "email": "not an email"},
    ]}
    path = tmp_path / "appwrite.json"
    path.write_text(json.dumps(users))
    out = _run(live_env, api.project.id, path, "appwrite", "--batch-size", "2")
    assert out.returncode == 0, out.stderr
    assert "Imported 3 user(s)" in out.stdout and "record 4 (aw-bad): invalid email" in out.stdout
    argon = api.call("GET", "/users/aw-argon", key=True).json()
    assert argon["labels"] == ["vip"] and argon["prefs"] == {"x": 1}
    for email in ("argon@example.com", "sha@example.com", "scrypt@example.com"):
        assert _signs_in(api, email, pw), email
    # What GET /users shows imports again into another project (the export is the import format).
    exported = api.call("GET", "/users", key=True, params={
        "queries[]": json.dumps({"method": "equal", "attribute": "$id", "values": ["aw-sha"]})}).json()
    again = tmp_path / "again.json"
    again.write_text(json.dumps(exported))
    other = make_project(django_db_blocker)
    out = _run(live_env, other.id, again, "appwrite")
    assert "Imported 1 user(s)" in out.stdout, out.stdout + out.stderr
    other_api = Api(api.server, other)
    assert _signs_in(other_api, "sha@example.com", pw)
