"""Projects (with their web platforms) and API keys in the admin.

A project's page also shows its service and protocol switches, each switched through the Project
service's endpoint (:mod:`apps.adminsite.switch_pages`).

A key's scopes are checkboxes over ``apps.core.http.auth.KEY_SCOPES``. A new key is made by
``api_key_create`` (the secret is stored hashed); its secret is shown once, on a page of its
own with a copy button, right after "Save".
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from apps.adminsite.deletes import CascadesReadOnly
from apps.adminsite.display import HidesTrashProject, LabelledInlineForm, ProjectFilter, readable_list
from apps.audit.models import Log
from apps.core.http.auth import KEY_SCOPES
from apps.databases.models import Database, Row, Table
from apps.projects.models import ApiKey, Platform, Project
from apps.projects.services import api_key_create, projects_delete

_SECRET = "apikey-secret-{}"  # session key: the new key's secret, until its page is shown


class PlatformInline(admin.TabularInline):
    """Web origins (``scheme://host[:port]`` or ``*``) or, for platforms made through the
    Project service, a host name or a native app's identifier."""

    model = Platform
    form = LabelledInlineForm
    extra = 1
    fields = ("name", "type", "origin", "hostname", "key")


class ProjectForm(forms.ModelForm):
    """The project's settings as operators can rely on them: phone sign-in says that it needs an
    SMS provider (``POST /account/tokens/phone`` and phone verification answer 503
    ``general_phone_disabled`` while the project has no enabled one, whatever the switch says)."""

    class Meta:
        model = Project
        fields = ("auth_phone",)  # ProjectAdmin's fieldsets choose the fields shown
        labels = {"auth_phone": "Phone sign-in (needs an SMS provider)"}
        help_texts = {"auth_phone": "Codes are texted through the project's first enabled SMS provider "
                                    "(Messaging); without one, phone sign-in and phone verification answer 503 "
                                    "whatever this switch says. Turning it off makes them answer 501 (method "
                                    "disabled) instead."}


@admin.register(Project)
class ProjectAdmin(CascadesReadOnly, admin.ModelAdmin):
    """Deleting a project deletes everything in it (:func:`apps.projects.services.projects_delete`),
    its read-only databases, tables, rows and audit log entries included."""

    form = ProjectForm
    cascade_read_only = (Log, Database, Table, Row)
    list_display = ("uid", "name", "auth_limit", "auth_max_sessions", "created_at")
    search_fields = ("uid", "name")
    inlines = [PlatformInline]
    # Running servers see a change within PROJECT_CACHE_TTL seconds. "Session alerts"
    # (auth_session_alerts) is not offered: the server sends no alert mail, so a switch would
    # promise something that never happens (the stored value stays as it is).
    fieldsets = [
        (None, {"fields": ("uid", "name")}),
        ("Users and sessions", {"fields": ("auth_limit", "auth_max_sessions", "auth_duration",
                                           "auth_invalidate_sessions")}),
        ("Passwords", {"fields": ("auth_password_min_length", "auth_password_history", "auth_password_dictionary",
                                  "auth_personal_data_check")}),
        ("Sign-in methods", {"fields": ("auth_email_password", "auth_magic_url", "auth_email_otp", "auth_anonymous",
                                        "auth_jwt", "auth_phone", "auth_invites", "auth_mock_numbers")}),
        ("What team members see of each other", {
            "fields": ("memberships_user_name", "memberships_user_email", "memberships_mfa", "memberships_user_id",
                       "memberships_user_phone", "memberships_user_accessed_at"),
            "classes": ("collapse",)}),
    ]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        """A project's page also lists its service and protocol switches (below its form, each
        switched by the Project service's own endpoint: :mod:`apps.adminsite.switch_pages`)."""
        from apps.adminsite.switch_pages import switches

        if obj is not None:
            context["switches"] = switches(obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def delete_model(self, request, obj):
        projects_delete([obj.pk])

    def delete_queryset(self, request, queryset):
        projects_delete(list(queryset.values_list("pk", flat=True)))


class ApiKeyForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=[(scope, scope) for scope in sorted(KEY_SCOPES)], widget=forms.CheckboxSelectMultiple,
        required=False, help_text="What the key may do. Every key also holds global, public and home.")

    class Meta:
        model = ApiKey
        fields = ("project", "name", "scopes", "expire")


@admin.register(ApiKey)
class ApiKeyAdmin(HidesTrashProject, admin.ModelAdmin):
    form = ApiKeyForm
    list_display = ("name", "uid", "project__uid", "scope_count", "expire", "accessed_at", "created_at")
    list_filter = (("project", ProjectFilter),)
    search_fields = ("name", "uid")
    readonly_fields = ("uid", "accessed_at", "created_at", "updated_at")
    fields = ("project", "name", "scopes", "expire", "uid", "accessed_at", "created_at", "updated_at")

    @admin.display(description="scopes")
    def scope_count(self, obj: ApiKey) -> int:
        return len(obj.scopes or [])

    def get_readonly_fields(self, request, obj=None):
        # The project of an existing key is fixed (its secret belongs to that project).
        return (*self.readonly_fields, "project") if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        key, secret = api_key_create(
            project_id=obj.project.uid, name=obj.name, scopes=list(obj.scopes or []), expire=obj.expire
        )
        # The admin's message and its change log name ``obj``: make it the key that was created.
        obj.__dict__.update({f.attname: getattr(key, f.attname) for f in ApiKey._meta.concrete_fields})
        obj._state.adding = False
        request.session[_SECRET.format(key.pk)] = secret

    def response_add(self, request, obj, post_url_continue=None):
        self.message_user(request, f"The API key “{obj.name}” ({obj.uid}) was added to project {obj.project.uid}.",
                          messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:projects_apikey_secret", args=[obj.pk]))

    def get_urls(self):
        secret = self.admin_site.admin_view(self.secret_view)
        return [path("<int:pk>/secret/", secret, name="projects_apikey_secret"), *super().get_urls()]

    def secret_view(self, request, pk: int):
        """The new key's secret, once: the session holds it until this page is shown."""
        key = self.get_object(request, str(pk))
        if key is None or not self.has_view_permission(request, key):
            return HttpResponseRedirect(reverse("admin:projects_apikey_changelist"))
        context = {
            **self.admin_site.each_context(request), "opts": self.opts, "key": key, "title": f"API key {key.name}",
            "secret": request.session.pop(_SECRET.format(key.pk), None), "scopes": readable_list(key.scopes),
            "media": self.media,
        }
        return TemplateResponse(request, "adminsite/apikey_secret.html", context)
