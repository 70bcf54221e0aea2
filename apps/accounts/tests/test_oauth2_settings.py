"""OAuth2 provider settings: encrypted secrets, key rotation, the ``oauthprovider`` command (run
as a real process on the test database) and the admin form."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from cryptography.fernet import Fernet
from django.test import override_settings

from apps.accounts.oauth2 import crypto
from conftest import ROOT, make_project


def manage(env, *args, stdin: str | None = None):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          input=stdin, timeout=60)


def test_encrypt_round_trip_and_empty():
    token = crypto.encrypt("s3cret")
    assert token != "s3cret" and "s3cret" not in token
    assert crypto.decrypt(token) == "s3cret"
    assert crypto.encrypt("") == "" and crypto.decrypt("") == ""


def test_keys_rotate_old_key_still_decrypts_until_rotated():
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    with override_settings(OAUTH2_SECRET_KEYS=[old]):
        token = crypto.encrypt("value")
    with override_settings(OAUTH2_SECRET_KEYS=[new, old]):
        assert crypto.decrypt(token) == "value"
        rotated = crypto.rotate(token)
    with override_settings(OAUTH2_SECRET_KEYS=[new]):
        assert crypto.decrypt(rotated) == "value"
        with pytest.raises(crypto.SecretUnreadable):
            crypto.decrypt(token)


def _row(sql, project_pk, provider):
    rows = sql("SELECT enabled, client_id, client_secret, discovery_url FROM accounts_oauthprovider "
               "WHERE project_id = %s AND provider = %s", (project_pk, provider))
    return rows[0] if rows else None


def test_command_configures_provider_with_encrypted_secret(live_env, django_db_blocker, sql):
    project = make_project(django_db_blocker)
    made = manage(live_env, "oauthprovider", project.id, "github", "--client-id", "Iv1.abc", "--secret-stdin",
                  "--enable", stdin="gh-secret-value\n")
    assert made.returncode == 0, made.stderr
    assert "github: enabled client_id=Iv1.abc secret=set" in made.stdout
    enabled, client_id, stored, _ = _row(sql, project.pk, "github")
    assert enabled and client_id == "Iv1.abc"
    assert stored and "gh-secret-value" not in stored
    assert crypto.decrypt(stored) == "gh-secret-value"  # the same key as the command's process

    shown = manage(live_env, "oauthprovider", project.id, "github")
    assert shown.returncode == 0 and "gh-secret-value" not in shown.stdout and "secret=set" in shown.stdout
    off = manage(live_env, "oauthprovider", project.id, "github", "--disable")
    assert off.returncode == 0 and _row(sql, project.pk, "github")[0] is False
    assert _row(sql, project.pk, "github")[2] == stored  # other settings kept
    listed = manage(live_env, "oauthprovider", "--list", project.id)
    assert f"{project.id} github: disabled" in listed.stdout


def test_command_oidc_with_discovery_and_secret_file(live_env, django_db_blocker, sql, tmp_path):
    project = make_project(django_db_blocker)
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("oidc-secret\n")
    made = manage(live_env, "oauthprovider", project.id, "oidc", "--client-id", "app", "--secret-file",
                  str(secret_file), "--discovery-url", "https://id.example.com/.well-known/openid-configuration",
                  "--enable")
    assert made.returncode == 0, made.stderr
    _, _, stored, discovery = _row(sql, project.pk, "oidc")
    assert discovery == "https://id.example.com/.well-known/openid-configuration"
    assert crypto.decrypt(stored) == "oidc-secret"


@pytest.mark.parametrize("args,stdin,message", [
    (["oidc", "--client-id", "x", "--secret-stdin", "--enable"], "s", "discovery_url"),
    (["github", "--client-id", "x", "--enable"], None, "client secret"),
    (["github", "--secret-stdin", "--enable"], "s", "client_id"),
    (["apple", "--client-id", "x", "--secret-stdin", "--enable"], "k", "team_id, key_id"),
    (["oidc", "--discovery-url", "ftp://x"], None, "must be an http(s) URL"),
    (["github", "--secret-stdin"], "", "is empty"),
    (["nosuch"], None, "invalid choice"),
], ids=["oidc without endpoints", "no secret", "no client id", "apple without ids", "bad url", "empty secret",
        "unknown provider"])
def test_command_refuses_unusable_settings(live_env, django_db_blocker, sql, args, stdin, message):
    project = make_project(django_db_blocker)
    bad = manage(live_env, "oauthprovider", project.id, *args, stdin=stdin)
    assert bad.returncode != 0
    assert message in bad.stderr
    assert _row(sql, project.pk, args[0]) is None  # nothing stored


def test_command_unknown_project(live_env):
    bad = manage(live_env, "oauthprovider", f"nope-{time.monotonic_ns()}", "github", "--client-id", "x")
    assert bad.returncode != 0 and "does not exist" in bad.stderr


def test_rotate_keys_command(live_env, tmp_path):
    """Rotation rewrites every stored secret, so it runs on its own embedded (SQLite) database."""
    import sqlite3

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    env = {k: v for k, v in live_env.items() if k != "DATABASE_URL"}
    env["SQLITE_PATH"] = str(tmp_path / "rotate.sqlite3")
    assert manage(env, "migrate", "-v0").returncode == 0
    assert manage(env, "createproject", "rot").returncode == 0
    assert manage({**env, "OAUTH2_SECRET_KEYS": old}, "oauthprovider", "rot", "discord", "--client-id", "d",
                  "--secret-stdin", stdin="disc").returncode == 0

    def stored():
        with sqlite3.connect(env["SQLITE_PATH"]) as db:
            return db.execute("SELECT client_secret FROM accounts_oauthprovider").fetchone()[0]

    before = stored()
    # Only the new key: the old value cannot be opened, and nothing is changed.
    refused = manage({**env, "OAUTH2_SECRET_KEYS": new}, "oauthprovider", "--rotate-keys")
    assert refused.returncode != 0 and "nothing was changed" in refused.stderr
    assert stored() == before
    # Both keys, new first: the value is rewritten under the new key.
    done = manage({**env, "OAUTH2_SECRET_KEYS": f"{new},{old}"}, "oauthprovider", "--rotate-keys")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "re-encrypted 1 row(s)"
    assert Fernet(new.encode()).decrypt(stored().encode()) == b"disc"


def test_bad_secret_keys_setting_stops_startup(live_env):
    bad = manage({**live_env, "OAUTH2_SECRET_KEYS": "not-a-key"}, "check")
    assert bad.returncode != 0 and "OAUTH2_SECRET_KEYS" in bad.stderr


@pytest.mark.django_db(transaction=True)
def test_admin_form_secret_is_write_only_and_encrypted(django_db_blocker):
    from apps.accounts.admin import OAuthProviderForm
    from apps.accounts.models import OAuthProvider
    from apps.projects.models import Project

    project = Project.objects.create(uid=f"adm{time.monotonic_ns() % 10**9}", name="adm")
    data = {"project": project.pk, "provider": "oidc", "enabled": "on", "client_id": "cid",
            "discovery_url": "https://id.example.com/.well-known/openid-configuration",
            "new_client_secret": "from-admin"}
    form = OAuthProviderForm(data=data)
    assert form.is_valid(), form.errors
    row = form.save()
    assert row.client_secret and crypto.decrypt(row.client_secret) == "from-admin"
    assert "from-admin" not in str(form.fields["new_client_secret"].widget.render("x", None))

    # An empty secret field keeps the stored secret.
    form = OAuthProviderForm(data={**data, "new_client_secret": ""}, instance=row)
    assert form.is_valid(), form.errors
    assert crypto.decrypt(form.save().client_secret) == "from-admin"
    # Clearing the secret of an enabled provider is refused.
    form = OAuthProviderForm(data={**data, "new_client_secret": "", "clear_client_secret": "on"}, instance=row)
    assert not form.is_valid() and "client secret" in str(form.errors)
    assert crypto.decrypt(OAuthProvider.objects.get(pk=row.pk).client_secret) == "from-admin"
