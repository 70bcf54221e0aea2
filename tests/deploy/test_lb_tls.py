"""The API and the admin behind the compose nginx configuration terminating TLS.

The repo's lb template is rendered as in tests/deploy/test_lb.py, with the two directives the
deployment docs tell an operator to add (``listen ... ssl`` and a certificate). nginx sends
``X-Forwarded-Proto: https``; the API process trusts it because nginx's address is in
``TRUSTED_PROXIES``. Through it: the admin login passes Django's CSRF origin check, its cookies
and the API's session cookies carry ``Secure``, and https answers carry HSTS and a CSP.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import time

import pytest
import requests
from django.conf import settings

from conftest import make_project
from tests.deploy.support import NGINX, ROOT, FakeDNS, free_port, start, start_nginx

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (.ci/run installs nginx-light)")

PASSWORD = "a-long-admin-passphrase-for-tls-tests-7"


def _self_signed(folder) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and its key, as PEM files in ``folder``."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


@pytest.fixture(scope="module")
def tls_lb(live_env, django_db_blocker, tmp_path_factory):
    api_port, tls_port = free_port(), free_port()
    public = f"https://127.0.0.1:{tls_port}"
    static = tmp_path_factory.mktemp("static")
    env = dict(live_env, APP_ENV="production", SECRET_KEY="t" * 64, ALLOWED_HOSTS="127.0.0.1,127.0.0.4",
               PUBLIC_URL=public, TRUSTED_PROXIES="127.0.0.1/32", STATIC_ROOT=str(static),
               ASGI_SERVER="uvicorn", BIND_HOST="127.0.0.4", PORT=str(api_port), SERVER_GRACEFUL_TIMEOUT="5")
    collected = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=120)
    assert collected.returncode == 0, collected.stderr
    username = f"tls-admin-{int(time.time() * 1000) % 10**8}"
    made = subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", username,
                           "--email", f"{username}@example.com"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD})
    assert made.returncode == 0, made.stderr
    dns = FakeDNS({"api.test": ["127.0.0.4"]})
    procs = []
    try:
        procs.append(start("tls-api", [sys.executable, "-m", "backend.serve"], env,
                           ready_url=f"http://127.0.0.4:{api_port}/v1/health/version"))
        cert, key = _self_signed(tmp_path_factory.mktemp("tls"))
        lb = start_nginx("tls-nginx", tmp_path_factory.mktemp("nginx"), {
            "API_HOST": "api.test", "API_PORT": str(api_port), "LB_RESOLVER": dns.address,
            "LB_RESOLVER_VALID": "1s", "LB_PORT": str(free_port()), "LB_MAX_BODY": str(settings.MAX_REQUEST_BODY),
            "LB_CLIENT_HEADER_TIMEOUT": "30s", "LB_CLIENT_BODY_TIMEOUT": "60s", "LB_KEEPALIVE_TIMEOUT": "65s",
        }, server_extra=f"    listen {tls_port} ssl;\n    ssl_certificate {cert};\n    ssl_certificate_key {key};\n")
        procs.append(lb)
        yield {"url": public, "username": username, "project": make_project(django_db_blocker), "lb": lb,
               "cert": cert}
    finally:
        for p in procs:
            p.stop()
        dns.close()


def _https(tls_lb) -> requests.Session:
    """A client that trusts the test's own certificate (and no CA bundle from the environment)."""
    session = requests.Session()
    session.trust_env = False
    session.verify = tls_lb["cert"]
    return session


def _set_cookies(response) -> list[str]:
    return response.raw.headers.getlist("Set-Cookie")


def test_admin_login_through_tls(tls_lb):
    http, url = _https(tls_lb), tls_lb["url"]
    page = http.get(url + "/admin/login/", timeout=10)
    assert page.status_code == 200
    assert page.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    (csrf_cookie,) = [c for c in _set_cookies(page) if c.startswith("csrftoken=")]
    assert "; secure" in csrf_cookie.lower()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    done = http.post(url + "/admin/login/?next=/admin/", allow_redirects=False, timeout=30,
                     data={"username": tls_lb["username"], "password": PASSWORD, "csrfmiddlewaretoken": token,
                           "next": "/admin/"},
                     headers={"Origin": url, "Referer": url + "/admin/login/"})
    assert done.status_code == 302, done.text[:500]  # 403 here was the CSRF check seeing http
    assert done.headers["Location"] == "/admin/"
    (session_cookie,) = [c for c in _set_cookies(done) if c.startswith("sessionid=")]
    assert "; secure" in session_cookie.lower() and "httponly" in session_cookie.lower()
    assert http.get(url + "/admin/", timeout=10).status_code == 200


def test_api_session_cookies_are_secure_through_tls(tls_lb):
    http, url, project = _https(tls_lb), tls_lb["url"], tls_lb["project"]
    headers = {"X-Appwrite-Project": project.id}
    email = f"tls{time.monotonic_ns()}@example.com"
    made = http.post(url + "/v1/account", json={"userId": "unique()", "email": email, "password": "password123"},
                     headers=headers, timeout=10)
    assert made.status_code == 201, made.text
    session = http.post(url + "/v1/account/sessions/email", json={"email": email, "password": "password123"},
                        headers=headers, timeout=10)
    assert session.status_code == 201, session.text
    cookies = [c for c in _set_cookies(session) if c.startswith("a_session_")]
    assert len(cookies) == 2 and all("; secure" in c.lower() for c in cookies), cookies
    # The same API over plain http through the same lb: not https, so no Secure flag.
    plain = requests.post(tls_lb["lb"].url + "/v1/account/sessions/email", timeout=10, headers=headers,
                          json={"email": email, "password": "password123"})
    assert plain.status_code == 201
    assert not any("; secure" in c.lower() for c in _set_cookies(plain) if c.startswith("a_session_"))
