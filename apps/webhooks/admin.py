"""Webhooks and their delivery log in the admin (read the log; edit a webhook's settings)."""

from __future__ import annotations

from django.contrib import admin

from apps.webhooks.models import Delivery, Webhook


class DeliveryInline(admin.TabularInline):
    """The latest attempts, read-only."""

    model = Delivery
    extra = 0
    can_delete = False
    fields = ("created_at", "events", "status", "ok", "attempt", "duration_ms", "error")
    readonly_fields = fields
    ordering = ("-created_at",)
    max_num = 0

    def get_queryset(self, request):
        return super().get_queryset(request).order_by("-created_at")


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ("name", "uid", "project", "url", "enabled", "attempts", "updated_at")
    list_filter = ("enabled",)
    search_fields = ("name", "uid", "url")
    readonly_fields = ("attempts", "logs", "created_at", "updated_at")
    exclude = ("signature_key",)
    inlines = [DeliveryInline]
