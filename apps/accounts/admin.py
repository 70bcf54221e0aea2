"""The admin of the project's users, sessions, OAuth2 providers and identities (operators, not
the product's API).

Every change made here drops the affected cached sessions in every server process
(``apps.core.drivers.cache.invalidate_sync``), like the API's own writes: a user blocked or signed out
here is refused on their next request.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html

from apps.accounts.api.manage.inputs import LabelsUpdate
from apps.accounts.models import Identity, OAuthProvider, Session, User
from apps.accounts.oauth2.config import TEXT_FIELDS, URL_FIELDS, ConfigError, validate
from apps.accounts.selectors.accounts import user_tag
from apps.adminsite.deletes import CascadesReadOnly
from apps.adminsite.display import ForeignKeyFilter, HidesTrashProject, ProjectFilter
from apps.adminsite.forms import LinesField, api_rule
from apps.audit.models import Log
from apps.core.drivers.cache import invalidate_sync


def _forget(*user_ids: int) -> None:
    if user_ids:
        invalidate_sync(*(user_tag(pk) for pk in set(user_ids)))


class SessionInline(admin.TabularInline):
    model = Session
    extra = 0
    can_delete = True
    fields = ("uid", "provider", "ip", "user_agent", "created_at", "expire")
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


class UserForm(forms.ModelForm):
    labels = LinesField(rows=3, rule=api_rule(LabelsUpdate, "labels"),
                        help_text=format_html("One a line (A-Z, a-z, 0-9); each gives the role {}.", "label:<name>"))

    class Meta:
        model = User
        fields = ("name", "email", "phone", "status", "labels", "prefs", "email_verification", "phone_verification",
                  "impersonator")
        help_texts = {"impersonator": "May act as other users of the project (X-Appwrite-Impersonate-User-* "
                                      "headers); their account stays read-only meanwhile."}


@admin.register(User)
class UserAdmin(CascadesReadOnly, admin.ModelAdmin):
    """Deleting a user deletes, in the same transaction, every row that refers to it (sessions,
    tokens, MFA challenges, identities, memberships and its audit log entries): what
    ``DELETE /v1/users/{userId}`` has the worker remove."""

    form = UserForm
    cascade_read_only = (Log,)
    # Phone, verification and registration are filters (and on the user's page), not columns: the
    # list fits a 1280 px window.
    list_display = ("uid", "email", "name", "project__uid", "status", "accessed_at", "session_count")
    list_filter = (("project", ProjectFilter), "status", "email_verification", "phone_verification", "impersonator")
    search_fields = ("uid", "email", "name", "phone")
    date_hierarchy = "registration"
    readonly_fields = ("uid", "project", "password_algorithm", "registration", "password_update", "accessed_at",
                       "created_at", "updated_at")
    fields = ("uid", "project", "name", "email", "phone", "status", "labels", "prefs", "email_verification",
              "phone_verification", "impersonator", "password_algorithm", "registration", "password_update", "accessed_at",
              "created_at", "updated_at")
    inlines = [SessionInline]
    actions = ["block", "unblock", "end_sessions"]

    def has_add_permission(self, request):
        return False  # users are created through the API (or manage.py importusers)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(session_total=Count("sessions"))

    @admin.display(description="sessions", ordering="session_total")
    def session_count(self, obj: User) -> str:
        url = reverse("admin:accounts_session_changelist") + f"?{UserFilter.parameter_name}={obj.pk}"
        return format_html('<a href="{}">{}</a>', url, obj.session_total)  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description="password")
    def password_algorithm(self, obj: User) -> str:
        return obj.password.split("$", 1)[0] if obj.password else "(none)"

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        _forget(obj.pk)

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        _forget(form.instance.pk)

    def delete_model(self, request, obj):
        pk = obj.pk
        super().delete_model(request, obj)
        _forget(pk)

    def delete_queryset(self, request, queryset):
        pks = list(queryset.values_list("pk", flat=True))
        super().delete_queryset(request, queryset)
        _forget(*pks)

    @admin.action(description="Block the selected users (their sessions stop working)")
    def block(self, request, queryset):
        pks = list(queryset.values_list("pk", flat=True))
        queryset.update(status=False)
        _forget(*pks)
        messages.success(request, f"Blocked {len(pks)} user(s).")

    @admin.action(description="Unblock the selected users")
    def unblock(self, request, queryset):
        pks = list(queryset.values_list("pk", flat=True))
        queryset.update(status=True)
        _forget(*pks)
        messages.success(request, f"Unblocked {len(pks)} user(s).")

    @admin.action(description="End all sessions of the selected users")
    def end_sessions(self, request, queryset):
        pks = list(queryset.values_list("pk", flat=True))
        count, _ = Session.objects.filter(user_id__in=pks).delete()
        _forget(*pks)
        messages.success(request, f"Ended {count} session(s).")


class UserFilter(ForeignKeyFilter):
    """Sessions of one user (``?user=<user pk>``; each user's session count links here). Lists
    the chosen user and the users of the latest sessions, not every user of every project."""

    title = "user"
    parameter_name = "user"
    LIMIT = 20

    def lookups(self, request, model_admin):
        latest = list(Session.objects.order_by("-created_at").values_list("user_id", flat=True)[: self.LIMIT * 5])
        chosen = self.chosen()
        pks = list(dict.fromkeys(([chosen] if chosen is not None else []) + latest))[: self.LIMIT]
        users = User.objects.in_bulk(pks)
        return [(str(pk), users[pk].email or users[pk].uid) for pk in pks if pk in users]


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("uid", "user", "provider", "ip", "created_at", "expire")
    list_filter = (UserFilter, ("project", ProjectFilter), "provider")
    list_select_related = ("user",)
    search_fields = ("uid", "user__email", "user__uid", "user__name", "ip")
    actions = ["end_selected"]
    readonly_fields = ("uid", "project", "user", "provider", "provider_uid", "factors", "ip", "user_agent", "expire",
                       "created_at", "updated_at")
    exclude = ("secret_hash",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def delete_model(self, request, obj):
        user_id = obj.user_id
        super().delete_model(request, obj)
        _forget(user_id)

    def delete_queryset(self, request, queryset):
        user_ids = list(queryset.values_list("user_id", flat=True))
        super().delete_queryset(request, queryset)
        _forget(*user_ids)

    @admin.action(description="End the selected sessions (sign them out now)", permissions=["delete"])
    def end_selected(self, request, queryset):
        count = queryset.count()
        self.delete_queryset(request, queryset)
        messages.success(request, f"Ended {count} session(s).")


class OAuthProviderForm(forms.ModelForm):
    """The client secret is write-only: it is never shown again, an empty field keeps the stored
    one, and "clear secret" removes it. It is stored encrypted."""

    new_client_secret = forms.CharField(
        label="Client secret", required=False, strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off"}),
        help_text="Write-only; empty keeps the stored secret. Apple: the contents of the .p8 key file.",
    )
    clear_client_secret = forms.BooleanField(label="Clear the stored secret", required=False)

    class Meta:
        model = OAuthProvider
        fields = ("project", "provider", "enabled", "client_id", *URL_FIELDS, *TEXT_FIELDS[1:])

    def clean(self):
        data = super().clean()
        new, clear = data.get("new_client_secret"), data.get("clear_client_secret")
        has_secret = bool(new) or (bool(self.instance.client_secret) and not clear)
        values = {name: data.get(name, "") for name in ("enabled", *TEXT_FIELDS, *URL_FIELDS)}
        if data.get("provider"):
            try:
                validate(data["provider"], values, has_secret)
            except ConfigError as exc:
                raise forms.ValidationError(str(exc)) from None
        return data

    def save(self, commit=True):
        row = super().save(commit=False)
        if self.cleaned_data.get("clear_client_secret"):
            row.set_client_secret("")
        if self.cleaned_data.get("new_client_secret"):
            row.set_client_secret(self.cleaned_data["new_client_secret"])
        if commit:
            row.save()
        return row


@admin.register(OAuthProvider)
class OAuthProviderAdmin(HidesTrashProject, admin.ModelAdmin):
    form = OAuthProviderForm
    list_display = ("provider", "project__uid", "enabled", "client_id", "has_secret", "updated_at")
    list_filter = ("provider", "enabled")
    search_fields = ("project__uid", "client_id")

    @admin.display(boolean=True, description="secret set")
    def has_secret(self, obj: OAuthProvider) -> bool:
        return bool(obj.client_secret)


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    """Linked provider accounts; read-only (they are made by sign-ins) but deletable."""

    list_display = ("uid", "provider", "provider_uid", "provider_email", "user", "project__uid", "created_at")
    list_filter = ("provider",)
    search_fields = ("uid", "provider_uid", "provider_email", "user__uid", "user__email")
    fields = ("uid", "project", "user", "provider", "provider_uid", "provider_email",
              "provider_access_token_expiry", "created_at", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
