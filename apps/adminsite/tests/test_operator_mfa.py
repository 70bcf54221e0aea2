"""A user's MFA page (``apps.adminsite.mfa_pages``): the factors and the TOTP authenticator as the
Users service lists them; removing the authenticator, regenerating recovery codes and turning
MFA off through ``/v1/users/{userId}/mfa``, after which a password alone signs the user in."""

from __future__ import annotations

import re

import pyotp
from django.urls import reverse

from conftest import Api


def _login(api: Api, email: str) -> str:
    r = api.call("POST", "/account/sessions/email", json={"email": email, "password": "password123"}, key=True)
    assert r.status_code == 201, r.text
    return r.json()["secret"]


def _post(client, blocker, url: str, action: str):
    with blocker.unblock():
        return client.post(url, {"action": action})


def _page(client, blocker, url: str) -> str:
    with blocker.unblock():
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_reset_a_users_mfa(admin_client, django_db_blocker, api: Api, sql):
    user, token = api.signup()
    secret = api.call("POST", "/account/mfa/authenticators/totp", json={}, session=token).json()["secret"]
    assert api.call("PUT", "/account/mfa/authenticators/totp", json={"otp": pyotp.TOTP(secret).now()},
                    session=token).status_code == 200
    assert api.call("PATCH", "/account/mfa", json={"mfa": True}, session=token).json()["mfa"] is True
    codes = api.call("POST", "/account/mfa/recovery-codes", json={}, session=token).json()["recoveryCodes"]
    partial = _login(api, user["email"])
    assert api.call("GET", "/account", session=partial).json()["type"] == "user_more_factors_required"

    pk = sql("SELECT id FROM accounts_user WHERE uid = %s", (user["$id"],))[0][0]
    url = reverse("admin:operator_user_mfa", args=[pk])
    assert f'href="{url}" id="user-mfa"' in _page(admin_client, django_db_blocker,
                                                  reverse("admin:accounts_user_change", args=[pk]))
    page = _page(admin_client, django_db_blocker, url)
    assert 'id="mfa-off"' in page and 'id="remove-totp"' in page and "<strong>ops</strong>" in page  # the staff's name
    assert re.search(r"Authenticator app \(TOTP\)</th>\s*<td>set up</td>", page)

    # New recovery codes replace the old ones, shown once.
    fresh = _post(admin_client, django_db_blocker, url, "recovery-codes")
    assert fresh.status_code == 200
    shown = re.findall(r"<li><code>([^<]+)</code></li>", fresh.content.decode())
    assert len(shown) == 6 and not set(shown) & set(codes)
    stored = api.call("GET", f"/users/{user['$id']}/mfa/recovery-codes", key=True).json()["recoveryCodes"]
    assert stored == shown

    # Remove the authenticator: the factors say so; removing it again is the API's 404.
    removed = _post(admin_client, django_db_blocker, url, "remove-totp")
    assert removed.status_code == 302
    assert api.call("GET", f"/users/{user['$id']}/mfa/factors", key=True).json()["totp"] is False
    again = _post(admin_client, django_db_blocker, url, "remove-totp")
    assert again.status_code == 200 and "(user_authenticator_not_found)" in again.content.decode()
    unknown = _post(admin_client, django_db_blocker, url, "remove-sms")
    assert unknown.status_code == 200 and "Unknown action." in unknown.content.decode()

    # MFA off: a password alone signs the user in again.
    off = _post(admin_client, django_db_blocker, url, "mfa-off")
    assert off.status_code == 302
    assert api.call("GET", f"/users/{user['$id']}", key=True).json()["mfa"] is False
    assert api.call("GET", "/account", session=_login(api, user["email"])).status_code == 200
    assert 'id="mfa-on"' in _page(admin_client, django_db_blocker, url)
