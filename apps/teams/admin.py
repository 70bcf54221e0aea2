"""The admin of teams and memberships. Changes drop the affected cached sessions in every
process (``apps.core.drivers.cache.invalidate_sync``), so roles follow at once."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from apps.accounts.selectors.accounts import user_tag
from apps.adminsite.display import ProjectFilter
from apps.adminsite.forms import LinesField, api_rule
from apps.core.drivers.cache import invalidate_sync
from apps.core.http.auth import team_tag
from apps.teams.api.inputs import MembershipUpdate
from apps.teams.models import Membership, Team


def _forget_team(team: Team, user_ids) -> None:
    invalidate_sync(team_tag(team.project_id, team.uid), *(user_tag(pk) for pk in set(user_ids)))


class MembershipForm(forms.ModelForm):
    roles = LinesField(rows=2, rule=api_rule(MembershipUpdate, "roles"), help_text="One a line, e.g. owner.")

    class Meta:
        model = Membership
        fields = ("roles", "confirm")


class MembershipInline(admin.TabularInline):
    model = Membership
    form = MembershipForm
    extra = 0
    fields = ("uid", "user", "roles", "confirm", "invited", "joined")
    readonly_fields = ("uid", "user", "invited", "joined")
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False  # members are added through the API (keys, or an owner's invitation)


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("uid", "name", "project__uid", "members", "created_at")
    list_filter = (("project", ProjectFilter),)
    search_fields = ("uid", "name")
    readonly_fields = ("uid", "project", "created_at", "updated_at")
    fields = ("uid", "project", "name", "prefs", "created_at", "updated_at")
    inlines = [MembershipInline]

    def has_add_permission(self, request):
        return False

    @admin.display(description="confirmed members")
    def members(self, obj: Team) -> int:
        return obj.memberships.filter(confirm=True).count()

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        _forget_team(form.instance, form.instance.memberships.values_list("user_id", flat=True))

    def delete_model(self, request, obj):
        user_ids = list(obj.memberships.values_list("user_id", flat=True))
        super().delete_model(request, obj)
        _forget_team(obj, user_ids)

    def delete_queryset(self, request, queryset):
        teams = list(queryset)
        user_ids = {t.pk: list(t.memberships.values_list("user_id", flat=True)) for t in teams}
        super().delete_queryset(request, queryset)
        for team in teams:
            _forget_team(team, user_ids[team.pk])


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipForm
    list_display = ("uid", "team", "user", "role_list", "confirm", "joined")
    list_filter = ("confirm", ("project", ProjectFilter))
    search_fields = ("uid", "team__uid", "team__name", "user__email", "user__uid")
    readonly_fields = ("uid", "project", "team", "user", "invited", "joined", "created_at", "updated_at")
    exclude = ("secret_hash",)

    def has_add_permission(self, request):
        return False

    @admin.display(description="roles")
    def role_list(self, obj: Membership) -> str:
        return ", ".join(obj.roles or []) or "-"

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        invalidate_sync(user_tag(obj.user_id))

    def delete_model(self, request, obj):
        user_id = obj.user_id
        super().delete_model(request, obj)
        invalidate_sync(user_tag(user_id))

    def delete_queryset(self, request, queryset):
        user_ids = list(queryset.values_list("user_id", flat=True))
        super().delete_queryset(request, queryset)
        invalidate_sync(*(user_tag(pk) for pk in set(user_ids)))
