from django.contrib import admin, messages

from apps.projects.models import ApiKey, Platform, Project
from apps.projects.services import api_key_create


class PlatformInline(admin.TabularInline):
    model = Platform
    extra = 1


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("uid", "name", "auth_limit", "auth_max_sessions", "created_at")
    search_fields = ("uid", "name")
    inlines = [PlatformInline]
    # Running servers see a change within PROJECT_CACHE_TTL seconds.
    fieldsets = [
        (None, {"fields": ("uid", "name")}),
        ("Users and sessions", {"fields": ("auth_limit", "auth_max_sessions", "auth_duration",
                                           "auth_invalidate_sessions", "auth_session_alerts")}),
        ("Passwords", {"fields": ("auth_password_min_length", "auth_password_history", "auth_password_dictionary",
                                  "auth_personal_data_check")}),
        ("Sign-in methods", {"fields": ("auth_email_password", "auth_magic_url", "auth_email_otp", "auth_anonymous",
                                        "auth_jwt", "auth_phone", "auth_invites", "auth_mock_numbers")}),
        ("What team members see of each other", {
            "fields": ("memberships_user_name", "memberships_user_email", "memberships_mfa", "memberships_user_id",
                       "memberships_user_phone", "memberships_user_accessed_at"),
            "classes": ("collapse",)}),
    ]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("uid", "name", "project", "expire", "accessed_at", "created_at")
    list_filter = ("project",)
    readonly_fields = ("uid", "accessed_at", "created_at", "updated_at")
    fields = ("project", "name", "scopes", "expire", "uid", "accessed_at", "created_at", "updated_at")

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        key, secret = api_key_create(
            project_id=obj.project.uid, name=obj.name, scopes=list(obj.scopes or []), expire=obj.expire
        )
        obj.pk = key.pk
        messages.warning(request, f"API key secret (shown once, copy it now): {secret}")
