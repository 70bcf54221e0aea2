"""A read-only admin view of databases, tables, columns and indexes.

Writes go through the API (``services``): they also manage the SQL indexes behind user
indexes, which an admin edit or delete would bypass.
"""

from django.contrib import admin

from apps.databases.models import Column, Database, Index, Table


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ColumnInline(admin.TabularInline):
    model = Column
    fields = ("key", "kind", "required", "array", "size", "spec")
    readonly_fields = fields
    extra = 0
    can_delete = False


class IndexInline(admin.TabularInline):
    model = Index
    fields = ("key", "type", "columns", "orders")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Database)
class DatabaseAdmin(ReadOnly):
    list_display = ("uid", "name", "type", "enabled", "project", "created_at")
    list_filter = ("type", "enabled")
    search_fields = ("uid", "name")


@admin.register(Table)
class TableAdmin(ReadOnly):
    list_display = ("uid", "name", "database", "enabled", "row_security", "created_at")
    search_fields = ("uid", "name")
    inlines = [ColumnInline, IndexInline]
