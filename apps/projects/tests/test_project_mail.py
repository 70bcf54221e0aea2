"""The account mails of a project with its own SMTP server (set through the SDK 27 ``Project``
service) go through that server, from its sender, with its templates per type and locale and
Appwrite's template variables; without it they go through the server's SMTP server with the
built-in text. Two real SMTP server processes (the server's and the project's) and the worker."""

from __future__ import annotations

import time

import pytest
from appwrite.client import Client
from appwrite.services.project import Project

from tests.mail import code_in, html_of, start_smtp_server, text_of


@pytest.fixture(scope="module")
def project_smtp(tmp_path_factory):
    server = start_smtp_server(tmp_path_factory.mktemp("project-smtp"))
    yield server
    server.stop()


@pytest.fixture
def svc(asgi_server, project) -> Project:
    return Project(Client().set_endpoint(asgi_server.endpoint).set_project(project.id).set_key(project.key))


def _address(tag: str) -> str:
    return f"{tag}{time.monotonic_ns()}@example.test"


def _email_code(api, email: str, locale: str = ""):
    headers = {"X-Appwrite-Locale": locale} if locale else {}
    r = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": email}, headers=headers)
    assert r.status_code == 201, r.text


def test_account_mails_use_the_project_smtp_server_and_templates(api, svc, smtp_server, project_smtp, mail_worker):
    name = svc.update_smtp(host=project_smtp.host, port=project_smtp.port, sender_email="auth@project.test",
                           sender_name="Project Auth", reply_to_email="help@project.test", reply_to_name="Help Desk",
                           enabled=True).name
    # Built-in text, through the project's server, from its sender, with its reply-to.
    to = _address("otp")
    _email_code(api, to)
    message = project_smtp.wait_for(to=to)[0]
    assert "Project Auth" in str(message["From"]) and "auth@project.test" in str(message["From"])
    assert "help@project.test" in str(message["Reply-To"]) and "Help Desk" in str(message["Reply-To"])
    assert message["Subject"].startswith("OTP for") and len(code_in(message)) == 6
    assert not [m for m in smtp_server.messages() if to in str(m["To"])]  # not through the server's

    # A template for the type and locale: its subject, message, sender and Appwrite's variables.
    svc.update_email_template("otpSession", "en", subject="Code {{otp}} for {{project}}",
                              message='<p dir="{{direction}}">Hi {{user}}, your code is <b>{{otp}}</b>.</p>'
                                      "<p>{{agentClient}} {{unknown}}</p>",
                              sender_name="Sign-in Desk", sender_email="codes@project.test")
    to = _address("custom")
    _email_code(api, to)
    message = project_smtp.wait_for(to=to)[0]
    code = code_in(message)
    assert str(message["Subject"]) == f"Code {code} for {name}"
    assert "codes@project.test" in str(message["From"]) and "Sign-in Desk" in str(message["From"])
    assert "help@project.test" in str(message["Reply-To"])  # the template leaves it: the SMTP setting's
    body = html_of(message)
    assert f"<b>{code}</b>" in body and 'dir="ltr"' in body and "{{unknown}}" in body
    assert "{{agentClient}}" not in body and "{{" not in body.replace("{{unknown}}", "")
    assert f"your code is {code}." in text_of(message)

    # Another locale without a template of its own: the built-in text in that language.
    to = _address("de")
    _email_code(api, to, locale="de")
    message = project_smtp.wait_for(to=to)[0]
    assert not str(message["Subject"]).startswith("Code ") and "auth@project.test" in str(message["From"])

    # A link mail: {{redirect}} is the link, HTML-escaped in the message, plain in the text part.
    svc.update_email_template("magicSession", "en", subject="Sign in to {{project}}",
                              message='<p>{{user}}: <a href="{{redirect}}">sign in</a></p>')
    to = _address("magic")
    r = api.call("POST", "/account/tokens/magic-url", json={"userId": "unique()", "email": to})
    assert r.status_code == 201, r.text
    message = project_smtp.wait_for(to=to)[0]
    assert str(message["Subject"]) == f"Sign in to {name}"
    text = text_of(message)
    assert "sign in (http" in text and "secret=" in text and "&secret=" in text
    assert "&amp;secret=" in html_of(message)

    # SMTP off: the server's own server and sender, the built-in text (Appwrite keeps custom
    # templates to custom SMTP servers).
    svc.update_smtp(enabled=False)
    to = _address("off")
    _email_code(api, to)
    message = smtp_server.wait_for(to=to)[0]
    assert str(message["Subject"]).startswith("OTP for") and "project.test" not in str(message["From"])
    assert not [m for m in project_smtp.messages() if to in str(m["To"])]


def test_a_server_without_mail_still_sends_for_a_project_with_its_own_smtp(settings):
    """Production without ``SMTP_HOST`` (``MAIL_ENABLED`` false): the mail routes answer 503
    ``general_smtp_disabled``, except for a project whose own SMTP server is on."""
    from apps.core.domain.mail import require_mail
    from apps.core.errors import AppwriteError

    settings.MAIL_ENABLED = False
    with pytest.raises(AppwriteError) as info:
        require_mail({"smtp_enabled": False})
    assert info.value.status == 503 and info.value.type == "general_smtp_disabled"
    require_mail({"smtp_enabled": True})
