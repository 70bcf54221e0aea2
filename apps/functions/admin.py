"""Admin views of functions, deployments, executions and variables: read-only (the API and the
worker own them: code, builds and containers follow the rows). A secret variable's value is
never shown."""

from __future__ import annotations

from django.contrib import admin

from apps.adminsite.display import ProjectFilter, ReadOnlyAdmin
from apps.functions.models import Deployment, Execution, Function, Variable


@admin.register(Function)
class FunctionAdmin(ReadOnlyAdmin):
    list_display = ("uid", "name", "project__uid", "runtime", "enabled", "schedule", "timeout", "created_at")
    list_filter = (("project", ProjectFilter), "runtime", "enabled")
    search_fields = ("uid", "name")


@admin.register(Deployment)
class DeploymentAdmin(ReadOnlyAdmin):
    list_display = ("uid", "function", "status", "source_size", "build_size", "build_duration", "created_at")
    list_filter = ("status",)
    search_fields = ("uid", "function__uid")


@admin.register(Execution)
class ExecutionAdmin(ReadOnlyAdmin):
    list_display = ("uid", "function", "trigger", "status", "response_status_code", "duration", "created_at")
    list_filter = ("trigger", "status")
    search_fields = ("uid", "function__uid")
    exclude = ("request_body",)


@admin.register(Variable)
class VariableAdmin(ReadOnlyAdmin):
    list_display = ("key", "uid", "function", "project__uid", "secret", "created_at")
    list_filter = ("secret",)
    search_fields = ("key", "uid")
    exclude = ("value",)
    readonly_fields = ("shown_value",)

    @admin.display(description="value")
    def shown_value(self, obj: Variable) -> str:
        return "(secret)" if obj.secret else obj.value
