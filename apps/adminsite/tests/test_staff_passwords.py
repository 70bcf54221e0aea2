"""Staff passwords: Django's validators on the admin's password forms (min length 12, common,
numeric, similar to the account's attributes), and staff hashes made with older argon2
parameters re-hashed with the server's (OWASP's) at the next admin sign-in."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.adminsite.tests.signin import admin_login, make_staff, signed_in, stored_hash

OWASP = "argon2$argon2id$v=19$m=19456,t=2,p=1$"


WEAK = [
    # (name, username, password, the validator's message)
    ("too short", "ops-short", "Xk3#pq9!Zr", "This password is too short. It must contain at least 12 characters."),
    ("common", "ops-common", "password1234", "This password is too common."),
    ("numeric", "ops-numeric", "730194628561", "This password is entirely numeric."),
    ("like the username", "grace-hopper-ops", "grace-hopper-ops1", "The password is too similar to the username."),
]


@pytest.mark.parametrize("username,password,message", [c[1:] for c in WEAK], ids=[c[0] for c in WEAK])
def test_admin_refuses_weak_staff_passwords(admin_client, django_db_blocker, username, password, message):
    from django.contrib.auth.models import User as Staff

    add = reverse("admin:adminsite_administrator_add")
    with django_db_blocker.unblock():
        page = admin_client.post(add, {"username": username, "password1": password, "password2": password,
                                       "usable_password": "true"})
        created = Staff.objects.filter(username=username).exists()
    assert page.status_code == 200 and not created
    assert message in page.content.decode()


def test_admin_accepts_a_strong_staff_password(admin_client, django_db_blocker):
    from django.contrib.auth.models import User as Staff

    password = "lantern-orbit-Quartz-42"
    with django_db_blocker.unblock():
        page = admin_client.post(reverse("admin:adminsite_administrator_add"), {
            "username": "ops-strong", "password1": password, "password2": password, "usable_password": "true"})
        assert page.status_code == 302, page.content.decode()[-2000:]
        assert Staff.objects.get(username="ops-strong").check_password(password)
        Staff.objects.filter(username="ops-strong").delete()


def test_admin_sign_in_rehashes_an_old_staff_hash(default_hashing_server, django_db_blocker):
    username, password = make_staff(django_db_blocker, appwrite_hash=True)
    assert stored_hash(django_db_blocker, username).startswith("argon2$argon2id$v=19$m=2048,t=4,p=3$")
    assert admin_login(default_hashing_server, username, "wrong password").status_code == 200
    assert stored_hash(django_db_blocker, username).startswith("argon2$argon2id$v=19$m=2048,t=4,p=3$")
    assert signed_in(admin_login(default_hashing_server, username, password))
    assert stored_hash(django_db_blocker, username).startswith(OWASP)
    assert signed_in(admin_login(default_hashing_server, username, password))
