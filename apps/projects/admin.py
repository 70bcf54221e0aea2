from django.contrib import admin, messages

from apps.projects.models import ApiKey, Platform, Project
from apps.projects.services import api_key_create


class PlatformInline(admin.TabularInline):
    model = Platform
    extra = 1


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("uid", "name", "created_at")
    search_fields = ("uid", "name")
    inlines = [PlatformInline]


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
