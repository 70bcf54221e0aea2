"""A project's mail pages (``apps.adminsite.mail_pages``): SMTP settings saved through
``PATCH /v1/project/smtp`` and a test mail that the worker delivers to the tests' SMTP server
process; a mail template edited per type and locale through ``/v1/project/templates/email``."""

from __future__ import annotations

import time

from django.urls import reverse
from django.utils.html import escape

from conftest import Api


def _post(client, blocker, url: str, form: dict):
    with blocker.unblock():
        return client.post(url, form)


def _page(client, blocker, url: str) -> str:
    with blocker.unblock():
        response = client.get(url)
    assert response.status_code == 200, response.content.decode()[-2000:]
    return response.content.decode()


def test_smtp_settings_and_test_mail(admin_client, django_db_blocker, api: Api, smtp_server, mail_worker):
    pk = api.project.pk
    url = reverse("admin:operator_project_smtp", args=[pk])
    test_url = reverse("admin:operator_project_smtp_test", args=[pk])
    assert f'href="{url}" id="project-smtp"' in _page(admin_client, django_db_blocker,
                                                      reverse("admin:projects_project_change", args=[pk]))
    to = f"ops{time.monotonic_ns()}@example.com"
    off = _post(admin_client, django_db_blocker, test_url, {"emails": to})
    assert off.status_code == 200 and "(general_argument_invalid)" in off.content.decode()
    bad = _post(admin_client, django_db_blocker, url, {"enabled": "on", "host": "x" * 300, "port": "25"})
    assert bad.status_code == 200 and "Ensure this value has at most 256 characters" in bad.content.decode()

    saved = _post(admin_client, django_db_blocker, url, {
        "enabled": "on", "sender_name": "Shop", "sender_email": "noreply@shop.test", "host": smtp_server.host,
        "port": str(smtp_server.port), "username": "", "password": "", "secure": ""})
    assert saved.status_code == 302, saved.content.decode()[-2000:]
    project = api.call("GET", "/project", key=True).json()
    assert (project["smtpEnabled"], project["smtpHost"], project["smtpPort"], project["smtpSenderEmail"]) == (
        True, smtp_server.host, smtp_server.port, "noreply@shop.test")
    page = _page(admin_client, django_db_blocker, url)
    assert f'href="{test_url}" id="smtp-test"' in page and f'value="{smtp_server.port}"' in page

    sent = _post(admin_client, django_db_blocker, test_url, {"emails": to})
    assert sent.status_code == 302, sent.content.decode()[-2000:]
    message = smtp_server.wait_for(to=to)[0]
    assert message["Subject"] == "Custom SMTP email sample" and "noreply@shop.test" in str(message["From"])


def test_mail_template_per_type_and_locale(admin_client, django_db_blocker, api: Api):
    pk = api.project.pk
    base = reverse("admin:operator_project_templates", args=[pk])
    url = f"{base}?template=recovery&locale=de"
    page = _page(admin_client, django_db_blocker, url)
    builtin = api.call("GET", "/project/templates/email/recovery", key=True, params={"locale": "de"}).json()
    assert '<option value="recovery" selected>' in page and escape(builtin["subject"]) in page
    bad = _post(admin_client, django_db_blocker, url, {"subject": "Hi", "message": "<p>x</p>", "sender_email": "nope"})
    assert bad.status_code == 200 and "Enter a valid email address." in bad.content.decode()
    done = _post(admin_client, django_db_blocker, url, {
        "subject": "Passwort zurücksetzen", "message": "<p>Hallo {{user}}</p>", "sender_name": "Shop",
        "sender_email": "hilfe@shop.test", "reply_to_name": "", "reply_to_email": ""})
    assert done.status_code == 302 and done["Location"] == url, done.content.decode()[-2000:]
    got = api.call("GET", "/project/templates/email/recovery", key=True, params={"locale": "de"}).json()
    assert (got["subject"], got["message"], got["senderEmail"]) == (
        "Passwort zurücksetzen", "<p>Hallo {{user}}</p>", "hilfe@shop.test")
    # Another locale of the same type is untouched.
    assert api.call("GET", "/project/templates/email/recovery", key=True,
                    params={"locale": "en"}).json()["subject"] != "Passwort zurücksetzen"
    unknown = _page(admin_client, django_db_blocker, f"{base}?template=nope")
    assert "Unknown template: showing verification." in unknown


def test_mail_template_saved_as_shown_stores_only_the_edit(admin_client, django_db_blocker, api: Api, sql):
    """A template never saved shows the server's built-in text and sender (``noreply@localhost``
    by default, an address the API refuses as input): saving it with only the subject edited, as a
    browser sends it (the message's lines with CRLF), stores the subject alone; the rest keeps
    following the server's own text and sender."""
    url = reverse("admin:operator_project_templates", args=[api.project.pk]) + "?template=verification&locale=en"
    with django_db_blocker.unblock():
        shown = admin_client.get(url).context["form"].initial
    builtin = api.call("GET", "/project/templates/email/verification", key=True).json()
    assert (shown["sender_email"], shown["message"]) == (builtin["senderEmail"], builtin["message"])
    done = _post(admin_client, django_db_blocker, url, {
        **{name: value or "" for name, value in shown.items()}, "subject": "Confirm your address",
        "message": shown["message"].replace("\n", "\r\n")})
    assert done.status_code == 302, done.content.decode()[-2000:]
    got = api.call("GET", "/project/templates/email/verification", key=True).json()
    assert got == {**builtin, "subject": "Confirm your address"}
    assert sql("SELECT subject, message, sender_name, sender_email FROM projects_mailtemplate t "
               "JOIN projects_project p ON p.id = t.project_id WHERE p.uid = %s AND t.template_id = 'verification'",
               (api.project.id,)) == [("Confirm your address", "", "", "")]


def test_mail_template_locale_with_a_nul_is_the_apis_refusal_not_a_500(admin_client, django_db_blocker, api: Api):
    """The locale comes from the page's query string, not the form (whose fields refuse NUL): the
    API's handlers write it through Django's ORM, whose refusal by PostgreSQL reached the page as
    a 500. It is shown as the API's 400, and no template is stored."""
    url = reverse("admin:operator_project_templates", args=[api.project.pk]) + "?template=recovery&locale=x%00"
    page = _page(admin_client, django_db_blocker, url)
    assert "(general_argument_invalid)" in page
    refused = _post(admin_client, django_db_blocker, url, {"subject": "Hi"})
    assert refused.status_code == 200 and "(general_argument_invalid)" in refused.content.decode()
    listed = api.call("GET", "/project/templates/email", key=True).json()["templates"]
    assert not [t for t in listed if t["locale"].startswith("x")]
