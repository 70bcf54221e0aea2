"""The request log in the admin (``REQUEST_LOG``; :mod:`apps.core.http.requestlog`): read-only,
newest first, filtered by project, status class and method, searched by path or request ID.

The filters offer fixed choices (and the projects from the projects' table), never a
``SELECT DISTINCT`` over the log, and the page counts at most :data:`COUNT_CAP` entries: the
table may hold millions of rows, and the page stays an index read on ``time``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.core.paginator import Paginator
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from apps.adminsite.display import TRASH_PROJECT, ReadOnlyAdmin
from apps.core.models import RequestLog

COUNT_CAP = 10_000
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


class CappedPaginator(Paginator):
    """Counts at most :data:`COUNT_CAP` + 1 rows (one ``COUNT`` over a ``LIMIT``)."""

    @cached_property
    def count(self) -> int:
        rows: Any = self.object_list  # the change list's queryset
        return rows[:COUNT_CAP + 1].count()


class ProjectIdFilter(admin.SimpleListFilter):
    title = "project"
    parameter_name = "project"

    def lookups(self, request, model_admin):
        from apps.projects.models import Project

        return [(uid, uid) for uid in Project.objects.exclude(uid=TRASH_PROJECT).order_by("uid")
                .values_list("uid", flat=True)]

    def queryset(self, request, queryset):
        return queryset.filter(project=self.value()) if self.value() else queryset


class StatusClassFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status_class"

    def lookups(self, request, model_admin):
        return [("2", "2xx"), ("3", "3xx"), ("4", "4xx"), ("5", "5xx")]

    def queryset(self, request, queryset):
        value = self.value()
        if value in ("2", "3", "4", "5"):
            return queryset.filter(status__gte=int(value) * 100, status__lt=int(value) * 100 + 100)
        return queryset


class MethodFilter(admin.SimpleListFilter):
    title = "method"
    parameter_name = "method"

    def lookups(self, request, model_admin):
        return [(m, m) for m in METHODS]

    def queryset(self, request, queryset):
        return queryset.filter(method=self.value()) if self.value() else queryset


@admin.register(RequestLog)
class RequestLogAdmin(ReadOnlyAdmin):
    list_display = ("at", "project", "method", "route_breakable", "status", "duration", "ip", "actor", "request_id")
    list_filter = (ProjectIdFilter, StatusClassFilter, MethodFilter)
    search_fields = ("path", "=request_id")
    search_help_text = "Path (any part of it) or request ID (the whole ID, as the X-Request-Id header gives it)."
    ordering = ("-time", "-id")
    paginator = CappedPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER  # a count per filter choice would read the whole table
    list_per_page = 50

    @admin.display(description="time", ordering="time")
    def at(self, entry: RequestLog) -> str:
        return timezone.localtime(entry.time).strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description="route", ordering="route")
    def route_breakable(self, entry: RequestLog) -> str:
        """The route, which may break after each ``/`` rather than anywhere in a name."""
        return format_html_join(mark_safe("/<wbr>"), "{}", ((part,) for part in entry.route.split("/")))

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, entry: RequestLog) -> str:
        return f"{entry.duration_ms:.1f} ms"

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {
            "request_log_on": settings.REQUEST_LOG, "request_log_days": settings.REQUEST_LOG_DAYS,
            "count_cap": COUNT_CAP, **(extra_context or {})})
