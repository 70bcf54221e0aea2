"""The operator pages (``apps.adminsite.operators``): adding a user, setting a password, adding a
team member, uploading and downloading a file, each through the API's own endpoint: the API's
refusals show on the form and nothing is written; what is written works on the API at once."""

from __future__ import annotations

import io
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.adminsite.tests.seed import png, seed
from conftest import Api


@pytest.fixture
def data(api: Api) -> dict:
    return seed(api)


def _post(client, blocker, url: str, form: dict):
    with blocker.unblock():
        return client.post(url, form)


def test_add_a_user_then_set_their_password(admin_client, django_db_blocker, api: Api, sql):
    url = reverse("admin:operator_user_add")
    with django_db_blocker.unblock():
        listing = admin_client.get(reverse("admin:accounts_user_changelist")).content.decode()
        page = admin_client.get(url).content.decode()
    assert f'href="{url}" class="addlink">Add user<' in listing
    assert "~trash" not in page and f'value="{api.project.pk}"' in page
    email = f"grace{time.monotonic_ns()}@example.com"
    short = _post(admin_client, django_db_blocker, url, {"project": api.project.pk, "email": email, "password": "x"})
    assert short.status_code == 200 and "Ensure this value has at least 8 characters" in short.content.decode()
    done = _post(admin_client, django_db_blocker, url, {"project": api.project.pk, "email": email,
                                                       "password": "grace-password-1", "name": "Grace Hopper"})
    assert done.status_code == 302, done.content.decode()[-2000:]
    again = _post(admin_client, django_db_blocker, url, {"project": api.project.pk, "email": email,
                                                        "password": "grace-password-1"})
    assert again.status_code == 200 and "(user_already_exists)" in again.content.decode()
    r = api.call("POST", "/account/sessions/email", json={"email": email, "password": "grace-password-1"})
    assert r.status_code == 201, r.text

    user_pk = int(done["Location"].rstrip("/").split("/")[-2])
    with django_db_blocker.unblock():
        change = admin_client.get(done["Location"]).content.decode()
    password_url = reverse("admin:operator_user_password", args=[user_pk])
    assert f'href="{password_url}" id="set-password"' in change
    changed = _post(admin_client, django_db_blocker, password_url, {"password": "a-new-password-2"})
    assert changed.status_code == 302
    assert api.call("POST", "/account/sessions/email", json={"email": email, "password": "grace-password-1"}
                    ).status_code == 401
    assert api.call("POST", "/account/sessions/email", json={"email": email, "password": "a-new-password-2"}
                    ).status_code == 201


def test_add_a_team_member(admin_client, django_db_blocker, api: Api, data, sql):
    team_pk = sql("SELECT id FROM teams_team WHERE uid = %s", (data["team"]["$id"],))[0][0]
    email = f"lin{time.monotonic_ns()}@example.com"
    user, _ = api.signup(email=email, name="Lin")
    url = reverse("admin:operator_member_add", args=[team_pk])
    nobody = _post(admin_client, django_db_blocker, url, {"user": "no-such-user", "roles": "editor"})
    assert nobody.status_code == 200 and "(user_not_found)" in nobody.content.decode()
    done = _post(admin_client, django_db_blocker, url, {"user": email, "roles": "editor, viewer"})
    assert done.status_code == 302, done.content.decode()[-2000:]
    members = api.call("GET", f"/teams/{data['team']['$id']}/memberships", key=True).json()["memberships"]
    added = next(m for m in members if m["userId"] == user["$id"])
    assert added["roles"] == ["editor", "viewer"] and added["confirm"] is True


def test_upload_and_download_a_file(admin_client, django_db_blocker, api: Api, data, sql):
    bucket_pk = sql("SELECT id FROM storage_bucket WHERE uid = %s", (data["bucket"]["$id"],))[0][0]
    url = reverse("admin:operator_file_upload", args=[bucket_pk])
    picture = png(64, 32)
    with django_db_blocker.unblock():
        bucket_page = admin_client.get(reverse("admin:storage_bucket_change", args=[bucket_pk])).content.decode()
        bad = admin_client.post(url, {"file_id": "bad id!", "file": SimpleUploadedFile("a.png", picture, "image/png")})
        done = admin_client.post(url, {"file_id": "", "file": SimpleUploadedFile("tiny.png", picture, "image/png")})
    assert f'href="{url}" id="upload-file"' in bucket_page
    assert bad.status_code == 200 and "invalid" in bad.content.decode().lower()
    assert done.status_code == 302, done.content.decode()[-2000:]
    files = api.call("GET", f"/storage/buckets/{data['bucket']['$id']}/files", key=True,
                     params={"search": "tiny"}).json()["files"]
    assert [f["name"] for f in files] == ["tiny.png"] and files[0]["sizeOriginal"] == len(picture)
    file_pk = int(done["Location"].rstrip("/").split("/")[-2])
    download = reverse("admin:operator_file_download", args=[file_pk])
    with django_db_blocker.unblock():
        page = admin_client.get(done["Location"]).content.decode()
        got = admin_client.get(download)
        body = b"".join(got.streaming_content)
    assert f'href="{download}" id="download-file"' in page
    assert got["Content-Disposition"] == 'attachment; filename="tiny.png"' and body == picture
    assert io.BytesIO(body).read(8) == b"\x89PNG\r\n\x1a\n"
