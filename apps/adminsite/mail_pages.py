"""A project's mail on operator pages, through the Project service (``docs/project-service.md``):

* ``projects/<pk>/smtp/``: the project's own SMTP server -> ``PATCH /v1/project/smtp`` (an empty
  password keeps the stored one, which is never shown back);
* ``projects/<pk>/smtp/test/``: addresses -> ``POST /v1/project/smtp/tests`` (one test mail each,
  sent by the worker through the project's server);
* ``projects/<pk>/templates/?template=<id>&locale=<locale>``: one mail template ->
  ``GET``/``PATCH /v1/project/templates/email`` (the fields the operator edited: what was never
  saved keeps following the server's built-in text and sender).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from apps.adminsite.api_call import call
from apps.adminsite.pages import attempt, guarded, operator, page
from apps.core.errors import AppwriteError

# Empty address fields are not sent: the API takes no empty address (the stored one stays).
KEEP_EMPTY = "Empty: the stored address stays (the API takes no empty one)."
SECURE = [("", "none (plain SMTP)"), ("tls", "STARTTLS"), ("ssl", "TLS from the start (SMTPS)")]


class SmtpForm(forms.Form):
    enabled = forms.BooleanField(required=False, help_text="Send this project's mail through the server below.")
    sender_name = forms.CharField(required=False, max_length=256)
    sender_email = forms.EmailField(required=False, help_text=KEEP_EMPTY)
    reply_to_name = forms.CharField(label="Reply-to name", required=False, max_length=256)
    reply_to_email = forms.EmailField(label="Reply-to email", required=False, help_text=KEEP_EMPTY)
    host = forms.CharField(required=False, max_length=256)
    port = forms.IntegerField(required=False, min_value=1, max_value=65535)
    username = forms.CharField(required=False, max_length=256)
    password = forms.CharField(required=False, max_length=256, widget=forms.PasswordInput,
                               help_text="Empty: the stored password stays (it is never shown).")
    secure = forms.ChoiceField(choices=SECURE, required=False)

    FIELDS = {"enabled": "enabled", "sender_name": "senderName", "sender_email": "senderEmail",
              "reply_to_name": "replyToName", "reply_to_email": "replyToEmail", "host": "host", "port": "port",
              "username": "username", "secure": "secure"}


class SmtpTestForm(forms.Form):
    emails = forms.CharField(label="Send to", widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="Up to 10 addresses, one per line.")


class TemplateForm(forms.Form):
    subject = forms.CharField(required=False, max_length=256, widget=forms.TextInput(attrs={"size": 80}))
    message = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 16, "cols": 90}),
                              help_text="HTML. Empty: the server's built-in text.")
    sender_name = forms.CharField(required=False, max_length=256)
    sender_email = forms.EmailField(required=False, help_text=KEEP_EMPTY)
    reply_to_name = forms.CharField(label="Reply-to name", required=False, max_length=256)
    reply_to_email = forms.EmailField(label="Reply-to email", required=False, help_text=KEEP_EMPTY)

    FIELDS = {"subject": "subject", "message": "message", "sender_name": "senderName",
              "sender_email": "senderEmail", "reply_to_name": "replyToName", "reply_to_email": "replyToEmail"}


def _params(form, only=None) -> dict:
    """The form's values under the API's names (those of the fields named in ``only``, when
    given), leaving out empty addresses and unset numbers."""
    d = form.cleaned_data
    return {api: d[name] for name, api in form.FIELDS.items()
            if (only is None or name in only) and d[name] is not None and not (name.endswith("email") and d[name] == "")}


def _edited(form) -> list[str]:
    """The template form's fields the operator changed. The form shows what ``GET`` answers, the
    server's built-in text and sender (``MAIL_SENDER_*``) for what was never saved; sending those
    back would store copies of them (and the API refuses a sender such as the default
    ``noreply@localhost``), so only what was edited is sent. A browser sends a textarea's lines
    with CRLF: line ends and outer spaces do not count as an edit."""
    def norm(value) -> str:
        return (value or "").replace("\r\n", "\n").strip()

    return [name for name in form.FIELDS if norm(form.cleaned_data[name]) != norm(form.initial.get(name))]


def _project(pk: int):
    from apps.projects.models import Project

    return get_object_or_404(Project, pk=pk)


def _back(project) -> str:
    return reverse("admin:projects_project_change", args=[project.pk])


def smtp(request, site, pk: int):
    project = _project(pk)
    form = SmtpForm(request.POST or None, initial={
        "enabled": project.smtp_enabled, "sender_name": project.smtp_sender_name,
        "sender_email": project.smtp_sender_email, "reply_to_name": project.smtp_reply_to_name,
        "reply_to_email": project.smtp_reply_to_email, "host": project.smtp_host, "port": project.smtp_port,
        "username": project.smtp_username, "secure": project.smtp_secure})
    if request.method == "POST" and form.is_valid():
        params = _params(form)
        if form.cleaned_data["password"]:
            params["password"] = form.cleaned_data["password"]
        done = attempt(form, request, lambda: call(project.uid, operator(request), "PATCH", "/project/smtp", params))
        if done:
            messages.success(request, f"The SMTP settings of {project.name} were saved.")
            return redirect("admin:operator_project_smtp", project.pk)
    test = reverse("admin:operator_project_smtp_test", args=[project.pk])
    return page(request, site, f"SMTP of {project.name}", form, _back(project), "Save",
                links=[(test, "Send test mail", "smtp-test")])


def smtp_test(request, site, pk: int):
    project = _project(pk)
    form = SmtpTestForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        emails = [e.strip() for e in form.cleaned_data["emails"].splitlines() if e.strip()]
        done = attempt(form, request, lambda: call(project.uid, operator(request), "POST", "/project/smtp/tests",
                                                   {"emails": emails}))
        if done is not None:
            messages.success(request, f"A test mail to {', '.join(emails)} is queued; the worker sends it "
                                      f"through {project.smtp_host}:{project.smtp_port}.")
            return redirect("admin:operator_project_smtp", project.pk)
    intro = format_html("<p>Through {}:{} as {}.</p>", project.smtp_host or "(no host)", project.smtp_port or "-",
                        project.smtp_sender_email or "(no sender)")
    return page(request, site, f"Send a test mail through the SMTP of {project.name}", form,
                reverse("admin:operator_project_smtp", args=[project.pk]), "Send test mail", intro=intro)


def templates(request, site, pk: int):
    from apps.projects.api.project import TEMPLATES

    project = _project(pk)
    who = operator(request)
    template_id = request.GET.get("template") or "verification"
    locale = (request.GET.get("locale") or "en").strip().lower()[:16] or "en"
    error = ""
    if template_id not in TEMPLATES:
        template_id, error = "verification", "Unknown template: showing verification."
    current: dict = {}
    try:
        current = call(project.uid, who, "GET", f"/project/templates/email/{template_id}", {"locale": locale})
    except AppwriteError as err:
        error = f"{err.message} ({err.type})"
    form = TemplateForm(request.POST or None, initial={name: current.get(api, "") for name, api in
                                                       TemplateForm.FIELDS.items()})
    if request.method == "POST" and form.is_valid():
        done = attempt(form, request, lambda: call(project.uid, who, "PATCH", "/project/templates/email", {
            "templateId": template_id, "locale": locale, **_params(form, _edited(form))}))
        if done:
            messages.success(request, f"The {template_id} mail template ({locale}) of {project.name} was saved.")
            return redirect(reverse("admin:operator_project_templates", args=[project.pk])
                            + f"?template={template_id}&locale={locale}")
    return TemplateResponse(request, "adminsite/project_templates.html", {
        **site.each_context(request), "title": f"Mail templates of {project.name}", "form": form,
        "back": _back(project), "templates": list(TEMPLATES), "template_id": template_id, "locale": locale,
        "error": error})


def urls(site) -> list:
    def view(fn):
        return guarded(site, fn, "projects.change_project")

    return [
        path("operator/projects/<int:pk>/smtp/", view(smtp), name="operator_project_smtp"),
        path("operator/projects/<int:pk>/smtp/test/", view(smtp_test), name="operator_project_smtp_test"),
        path("operator/projects/<int:pk>/templates/", view(templates), name="operator_project_templates"),
    ]
