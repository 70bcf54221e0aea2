"""The audit log in the admin: read-only."""

from __future__ import annotations

from django.contrib import admin

from apps.adminsite.display import ProjectFilter, ReadOnlyAdmin
from apps.audit.models import Log


@admin.register(Log)
class LogAdmin(ReadOnlyAdmin):
    list_display = ("time", "event", "user", "actor_type", "actor_email", "ip")
    list_filter = ("event", "actor_type", ("project", ProjectFilter))
    search_fields = ("user__email", "user__uid", "actor_email", "ip", "event")
    date_hierarchy = "time"
    list_select_related = ("user",)
