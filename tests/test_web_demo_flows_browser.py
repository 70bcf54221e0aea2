"""The notes demo's account extras (examples/web-notes/src/extras.js and its modules) in headless
Chromium, on the live server and the demo of ``tests/test_web_demo_browser.py`` (same fixtures,
same two modes: ``same`` origin at ``/demo/``, ``cross`` origin from a static server).

Each test runs one flow of ``examples/web-notes/e2e/lifecycle.mjs``: forgotten password, sign-in
with an emailed code, email verification (the mails go through the real SMTP server and the mail
worker; the script asks this test for the link or code over its standard input and output),
sign-in at the real OpenID provider (``tests/oidc``, configured by the demo's ``setup.py``), and
the profile (initials avatar, country picker saved in the user's prefs). The test then checks on
the API what the browser did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from apps.accounts.tests.test_oauth2_flow import unique_login
from tests import test_web_demo_browser as web_demo
from tests.mail import code_in, link_in
from tests.test_web_demo_browser import BROWSER_ARTIFACTS, CHROMIUM, MODES, NODE, WEB, Demo

# The demo's fixtures (a Vite build, a live server with the project set up by setup.py, a static
# server for the cross-origin page) and its skip conditions (no node, chromium or node_modules).
demo_dist = web_demo.demo_dist
demo = web_demo.demo
pytestmark = web_demo.pytestmark

PASSWORD = "flows-password-1"


def new_user(demo: Demo, tag: str) -> str:
    """A fresh account (email + ``PASSWORD``, unverified) made through the API; returns its email."""
    email = f"{tag}-{time.monotonic_ns()}@example.com"
    r = demo.api.call("POST", "/account", json={"userId": "unique()", "email": email, "password": PASSWORD,
                                                "name": f"Flow {tag.title()}"})
    assert r.status_code == 201, r.text
    return email


def session_of(demo: Demo, email: str, password: str = PASSWORD) -> str | None:
    """A session secret for email + password, or None when the server refuses them."""
    r = demo.api.call("POST", "/account/sessions/email", json={"email": email, "password": password}, key=True)
    return r.json()["secret"] if r.status_code == 201 else None


def account_of(demo: Demo, email: str) -> dict:
    r = demo.api.call("GET", "/account", session=session_of(demo, email))
    assert r.status_code == 200, r.text
    return r.json()


def user_of(demo: Demo, email: str) -> dict:
    """The user with ``email``, through the Users API."""
    r = demo.api.call("GET", "/users", key=True, params={
        "queries[]": [json.dumps({"method": "equal", "attribute": "email", "values": [email]})]})
    assert r.status_code == 200 and r.json()["total"] == 1, r.text
    return r.json()["users"][0]


def run_extra(demo: Demo, flow: str, mode: str, smtp=None, url: str = "", **extra: str) -> str:
    """Run ``e2e/lifecycle.mjs <flow>``; answer its ``MAIL`` questions from ``smtp`` (the newest
    mail to the address since the run began: its first link or 6-digit code) and do what its
    ``END_SESSIONS`` lines ask (end every session of that user, as "sign out everywhere", a
    password recovery or a block would). Returns stdout."""
    env = {**os.environ, "DEMO_URL": url or demo.url(mode), "PROJECT": demo.project_id,
           "CROSS_ORIGIN": "1" if mode == "cross" else "0", "ARTIFACTS_DIR": str(BROWSER_ARTIFACTS),
           "CHROMIUM": CHROMIUM, **extra}
    before = smtp.messages() if smtp else []
    proc = subprocess.Popen([NODE, "e2e/lifecycle.mjs", flow], cwd=WEB, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killer = threading.Timer(180, proc.kill)
    killer.start()
    out = []
    try:
        for line in proc.stdout:
            out.append(line)
            if line.startswith("MAIL "):
                ask = json.loads(line[5:])
                seen = sum(ask["to"].lower() in str(m["To"]).lower() for m in before)
                try:
                    mail = smtp.wait_for(to=ask["to"], count=seen + 1)[-1]
                    reply = code_in(mail) if ask["want"] == "code" else link_in(mail)
                except AssertionError as exc:
                    reply = f"ERROR {exc}".replace("\n", " ")
                proc.stdin.write(reply + "\n")
                proc.stdin.flush()
            elif line.startswith("END_SESSIONS "):
                user = user_of(demo, json.loads(line.split(" ", 1)[1])["email"])
                r = demo.api.call("DELETE", f"/users/{user['$id']}/sessions", key=True)
                proc.stdin.write(("done" if r.status_code == 204 else f"ERROR {r.status_code} {r.text}") + "\n")
                proc.stdin.flush()
        stderr = proc.stderr.read()
        proc.wait(30)
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
    stdout = "".join(out)
    assert proc.returncode == 0, f"{flow} ({mode}) failed:\n{stdout}\n{stderr}"
    assert f"ok {flow}-{mode}" in stdout
    return stdout


@pytest.fixture(scope="module")
def mail(demo, mail_worker, smtp_server):
    """The SMTP server the mail worker (on the demo server's database) sends through."""
    return smtp_server


@pytest.fixture(scope="module")
def openid_demo(demo, demo_dist, oidc_provider, live_env):
    """The demo with the project's OpenID provider set up by ``setup.py`` (its ``--oidc-*`` flags):
    a client registered at the real provider for this server's callback URL, the secret on
    standard input."""
    callback = f"{demo.server.endpoint}/account/sessions/oauth2/callback/oidc/{demo.project_id}"
    client_id, secret = oidc_provider.register_client([callback])
    done = subprocess.run(
        [sys.executable, str(WEB / "setup.py"), "--endpoint", demo.server.endpoint, "--project", demo.project_id,
         "--key", demo.api.project.key, f"--oidc-client-id={client_id}",  # may begin with "-"
         "--oidc-discovery-url", oidc_provider.discovery_url, "--oidc-secret-stdin", "--config", str(demo_dist / "config.js")],
        input=secret, capture_output=True, text=True, timeout=180, env=live_env,
    )
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert f"callback URL is {callback}" in done.stdout, done.stdout
    assert '"oauth2": "oidc"' in (demo_dist / "config.js").read_text()
    return demo


@pytest.mark.parametrize("mode", MODES)
def test_forgot_password(demo, mail, mode):
    email = new_user(demo, f"recover-{mode}")
    run_extra(demo, "recovery", mode, mail, USER_EMAIL=email, NEW_PASSWORD="a-brand-new-password")
    assert session_of(demo, email) is None, "the old password no longer works"
    assert session_of(demo, email, "a-brand-new-password")


@pytest.mark.parametrize("mode", MODES)
def test_sign_in_with_an_email_code(demo, mail, mode):
    out = run_extra(demo, "code", mode, mail)
    email = next(line.split()[1] for line in out.splitlines() if line.startswith("EMAIL "))
    r = demo.api.call("GET", "/users", key=True, params={
        "queries[]": [json.dumps({"method": "equal", "attribute": "email", "values": [email]})]})
    assert r.status_code == 200 and r.json()["total"] == 1, r.text
    assert r.json()["users"][0]["emailVerification"] is True, "a code sign-in proves the address"


@pytest.mark.parametrize("mode", MODES)
def test_verify_email(demo, mail, mode):
    email = new_user(demo, f"verify-{mode}")
    assert account_of(demo, email)["emailVerification"] is False
    run_extra(demo, "verify", mode, mail, USER_EMAIL=email, USER_PASSWORD=PASSWORD)
    assert account_of(demo, email)["emailVerification"] is True


@pytest.mark.parametrize("mode", MODES)
def test_sign_in_with_openid(openid_demo, mode):
    demo = openid_demo
    login = unique_login(f"demo{mode}")
    # Same origin reads `oauth2` from the config.js setup.py wrote; cross origin from the query.
    url = demo.url(mode) + ("&oauth2=oidc" if mode == "cross" else "")
    run_extra(demo, "openid", mode, url=url, OIDC_LOGIN=login)
    r = demo.api.call("GET", "/users/identities", key=True, params={
        "queries[]": [json.dumps({"method": "equal", "attribute": "providerEmail", "values": [f"{login}@example.com"]})]})
    assert r.status_code == 200, r.text
    assert [i["provider"] for i in r.json()["identities"]] == ["oidc"]


@pytest.mark.parametrize("mode", MODES)
def test_openid_cancelled_lands_on_failure(openid_demo, mode):
    url = openid_demo.url(mode) + ("&oauth2=oidc" if mode == "cross" else "")
    run_extra(openid_demo, "openid-cancel", mode, url=url)


@pytest.mark.parametrize("mode", MODES)
def test_avatar_and_country(demo, mode):
    email = new_user(demo, f"profile-{mode}")
    run_extra(demo, "profile", mode, USER_EMAIL=email, USER_PASSWORD=PASSWORD)
    r = demo.api.call("GET", "/account/prefs", session=session_of(demo, email))
    assert r.status_code == 200 and r.json() == {"country": "FR"}, r.text


def test_setup_refuses_openid_flags_without_a_secret(demo):
    done = subprocess.run(
        [sys.executable, str(WEB / "setup.py"), "--endpoint", demo.server.endpoint, "--project", demo.project_id,
         "--key", "k", "--oidc-client-id", "x", "--oidc-discovery-url", "http://127.0.0.1:1/x"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2 and "--oidc-secret-file or --oidc-secret-stdin" in done.stderr


@pytest.mark.parametrize("mode", MODES)
def test_two_step_sign_in_with_totp_and_a_recovery_code(demo, mode):
    """Turn on TOTP in the demo, sign in with password + authenticator code, then with a
    recovery code, turn it off; the server agrees at each end."""
    email = new_user(demo, f"mfa-{mode}")
    run_extra(demo, "mfa", mode, USER_EMAIL=email, USER_PASSWORD=PASSWORD)
    user = user_of(demo, email)
    assert user["mfa"] is False, "turned off again at the end"
    r = demo.api.call("GET", f"/users/{user['$id']}/mfa/factors", key=True)
    assert r.status_code == 200 and r.json()["totp"] is True, r.text  # the authenticator stays set up
    r = demo.api.call("GET", f"/users/{user['$id']}/mfa/recovery-codes", key=True)
    assert r.status_code == 200 and len(r.json()["recoveryCodes"]) == 5, r.text  # one was used


@pytest.mark.parametrize("mode", MODES)
def test_session_ended_elsewhere_goes_to_the_log_in_form(demo, mode):
    email = new_user(demo, f"ended-{mode}")
    run_extra(demo, "ended", mode, USER_EMAIL=email, USER_PASSWORD=PASSWORD)
