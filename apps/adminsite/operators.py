"""What operators do besides editing rows: add a user, set a user's password, add a member to a
team, upload a file to a bucket (each the API's own endpoint, :mod:`apps.adminsite.api_call`), and
download a file's bytes.

Pages (staff only, under ``/admin/operator/``), linked from the users' list, a user's page, a
team's page, a bucket's page and a file's page (templates ``admin/<app>/<model>/...``):

* ``users/add/``: project, email, password, name -> ``POST /v1/users``;
* ``users/<pk>/password/``: new password -> ``PATCH /v1/users/{userId}/password``;
* ``teams/<pk>/members/add/``: a user's email or ID, roles -> ``POST /v1/teams/{teamId}/memberships``
  (an API key's membership is confirmed at once, no invitation mail);
* ``buckets/<pk>/upload/``: a file -> ``POST /v1/storage/buckets/{bucketId}/files``;
* ``files/<pk>/download/``: the stored bytes, as ``attachment``.

A refusal shows the API's message and error type on the form; nothing is written.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.http import content_disposition_header

from apps.adminsite.api_call import call
from apps.adminsite.display import TRASH_PROJECT
from apps.adminsite.pages import attempt as _attempt
from apps.adminsite.pages import guarded
from apps.adminsite.pages import operator as _operator
from apps.adminsite.pages import page as _page
from apps.core.http.context import UploadedPart


class UserAddForm(forms.Form):
    project = forms.ModelChoiceField(queryset=None)
    email = forms.EmailField()
    password = forms.CharField(widget=forms.PasswordInput(render_value=True), min_length=8,
                               help_text="The project's password policy applies (length, dictionary, personal data).")
    name = forms.CharField(required=False, max_length=128)

    def __init__(self, *args, **kwargs):
        from apps.projects.models import Project

        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = Project.objects.exclude(uid=TRASH_PROJECT).order_by("uid")


class PasswordForm(forms.Form):
    password = forms.CharField(label="New password", widget=forms.PasswordInput, min_length=8,
                               help_text="The user's sessions stay; end them from the users' list if needed.")


class MemberAddForm(forms.Form):
    user = forms.CharField(label="User email or ID", max_length=320)
    roles = forms.CharField(required=False, max_length=1000, help_text="Comma separated, e.g. owner, editor.")


class UploadForm(forms.Form):
    file = forms.FileField()
    file_id = forms.CharField(label="File ID", required=False, max_length=36, help_text="Empty: a unique ID is made.")


def user_add(request, site):
    from apps.accounts.models import User

    form = UserAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        project = d["project"]
        made = _attempt(form, request, lambda: call(project.uid, _operator(request), "POST", "/users", {
            "userId": "unique()", "email": d["email"], "password": d["password"],
            **({"name": d["name"]} if d["name"] else {})}))
        if made:
            user = User.objects.get(project=project, uid=made["$id"])
            messages.success(request, f"The user {d['email']} ({made['$id']}) was added to project {project.uid}.")
            return redirect("admin:accounts_user_change", user.pk)
    return _page(request, site, "Add user", form, reverse("admin:accounts_user_changelist"), "Add user")


def user_password(request, site, pk: int):
    from apps.accounts.models import User

    user = get_object_or_404(User.objects.select_related("project"), pk=pk)
    form = PasswordForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        done = _attempt(form, request, lambda: call(user.project.uid, _operator(request), "PATCH",
                                                    f"/users/{user.uid}/password",
                                                    {"password": form.cleaned_data["password"]}))
        if done:
            messages.success(request, f"The password of {user.email or user.uid} was changed.")
            return redirect("admin:accounts_user_change", user.pk)
    return _page(request, site, f"Set the password of {user.email or user.uid}", form,
                 reverse("admin:accounts_user_change", args=[user.pk]), "Set password")


def member_add(request, site, pk: int):
    from apps.teams.models import Team

    team = get_object_or_404(Team.objects.select_related("project"), pk=pk)
    form = MemberAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        who = form.cleaned_data["user"].strip()
        roles = [r.strip() for r in form.cleaned_data["roles"].split(",") if r.strip()]
        params = {"roles": roles, **({"email": who} if "@" in who else {"userId": who})}
        done = _attempt(form, request, lambda: call(team.project.uid, _operator(request), "POST",
                                                    f"/teams/{team.uid}/memberships", params))
        if done:
            messages.success(request, f"{done.get('userEmail') or who} is a member of {team.name} now.")
            return redirect("admin:teams_team_change", team.pk)
    return _page(request, site, f"Add a member to {team.name}", form,
                 reverse("admin:teams_team_change", args=[team.pk]), "Add member")


def file_upload(request, site, pk: int):
    from apps.storage.models import Bucket, File

    bucket = get_object_or_404(Bucket.objects.select_related("project"), pk=pk)
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        part = UploadedPart(filename=upload.name, content_type=upload.content_type or "application/octet-stream",
                            size=upload.size, file=upload.file)
        upload.file.seek(0)
        made = _attempt(form, request, lambda: call(bucket.project.uid, _operator(request), "POST",
                                                    f"/storage/buckets/{bucket.uid}/files",
                                                    {"fileId": form.cleaned_data["file_id"] or "unique()", "file": part}))
        if made:
            messages.success(request, f"“{made['name']}” ({made['$id']}) was uploaded to {bucket.name}.")
            return redirect("admin:storage_file_change", File.objects.get(bucket=bucket, uid=made["$id"]).pk)
    return _page(request, site, f"Upload a file to {bucket.name}", form,
                 reverse("admin:storage_bucket_change", args=[bucket.pk]), "Upload")


def file_download(request, site, pk: int):
    """The file's stored bytes (this server stores them as uploaded: no compression or
    encryption is applied), as an attachment named after the file."""
    from apps.storage import backends
    from apps.storage.models import File

    file = get_object_or_404(File, pk=pk)
    if not file.key:
        raise Http404("This file has no stored bytes (an unfinished upload).")
    chunks = backends.read_range(file.key, 0, file.size_actual)
    response = StreamingHttpResponse(chunks, content_type=file.mime_type or "application/octet-stream")
    response["Content-Disposition"] = content_disposition_header(True, file.name)
    response["Content-Length"] = str(file.size_actual)
    response["X-Content-Type-Options"] = "nosniff"
    return response


def urls(site) -> list:
    """The pages above and those of :mod:`apps.adminsite.schema_pages`, :mod:`~apps.adminsite.mfa_pages`,
    :mod:`~apps.adminsite.mail_pages`, :mod:`~apps.adminsite.switch_pages` and :mod:`~apps.adminsite.usage`,
    each wrapped by :func:`apps.adminsite.pages.guarded` with the Django permission named with it."""
    from apps.adminsite import mail_pages, mfa_pages, schema_pages, switch_pages, usage

    def view(fn, permission: str):
        return guarded(site, fn, permission)

    return [
        path("operator/users/add/", view(user_add, "accounts.change_user"), name="operator_user_add"),
        path("operator/users/<int:pk>/password/", view(user_password, "accounts.change_user"),
             name="operator_user_password"),
        path("operator/teams/<int:pk>/members/add/", view(member_add, "teams.change_team"),
             name="operator_member_add"),
        path("operator/buckets/<int:pk>/upload/", view(file_upload, "storage.change_bucket"),
             name="operator_file_upload"),
        path("operator/files/<int:pk>/download/", view(file_download, "storage.view_file"),
             name="operator_file_download"),
        *schema_pages.urls(site), *mfa_pages.urls(site), *mail_pages.urls(site),
        *switch_pages.urls(site), *usage.urls(site),
    ]
