"""Signing in to the admin over HTTP as a browser does (the form's CSRF token and cookie), and
staff accounts made for it."""

from __future__ import annotations

import re
import secrets

import requests

from conftest import LiveServer

# Appwrite's own argon2 parameters (src/Appwrite/Auth/Hash/Argon2.php), this server's default
# before it moved to OWASP's: time cost, memory in KiB, lanes.
APPWRITE_ARGON2 = (4, 2048, 3)


def appwrite_argon2_hash(password: str) -> str:
    """``password`` hashed as this server stored it with Appwrite's parameters (Django's form:
    ``argon2$argon2id$v=19$m=2048,t=4,p=3$...``)."""
    from django.contrib.auth.hashers import Argon2PasswordHasher

    hasher = Argon2PasswordHasher()
    hasher.time_cost, hasher.memory_cost, hasher.parallelism = APPWRITE_ARGON2
    return hasher.encode(password, hasher.salt())


def make_staff(django_db_blocker, *, appwrite_hash: bool = False) -> tuple[str, str]:
    """A new staff superuser, committed: ``(username, password)``. Its hash is made with the test
    process's hasher, or with :data:`APPWRITE_ARGON2` when ``appwrite_hash``."""
    from django.contrib.auth.models import User as Staff

    username, password = f"ops-{secrets.token_hex(4)}", secrets.token_urlsafe(16)
    with django_db_blocker.unblock():
        staff = Staff(username=username, is_staff=True, is_superuser=True)
        if appwrite_hash:
            staff.password = appwrite_argon2_hash(password)
        else:
            staff.set_password(password)
        staff.save()
    return username, password


def stored_hash(django_db_blocker, username: str) -> str:
    from django.contrib.auth.models import User as Staff

    with django_db_blocker.unblock():
        return Staff.objects.get(username=username).password


def admin_login(server: LiveServer, username: str, password: str, ip: str | None = None) -> requests.Response:
    """Load ``/admin/login/`` and post the form; ``ip`` is sent as ``X-Forwarded-For`` (believed
    when the server trusts 127.0.0.1). A good sign-in is a 302 to ``/admin/`` with a session
    cookie; redirects are not followed."""
    http = requests.Session()
    headers = {"X-Forwarded-For": ip} if ip else {}
    page = http.get(server.url + "/admin/login/", headers=headers, timeout=30)
    assert page.status_code == 200, page.text[-500:]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return http.post(server.url + "/admin/login/?next=/admin/", headers=headers, timeout=30, allow_redirects=False,
                     data={"csrfmiddlewaretoken": token, "username": username, "password": password,
                           "next": "/admin/"})


def signed_in(response: requests.Response) -> bool:
    return response.status_code == 302 and response.headers["Location"] == "/admin/" and "sessionid" in response.cookies
