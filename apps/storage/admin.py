"""Admin views of buckets and files: read-mostly (bytes and uploads are managed by the API)."""

from django.contrib import admin

from apps.storage.models import Bucket, File


@admin.register(Bucket)
class BucketAdmin(admin.ModelAdmin):
    list_display = ("uid", "name", "project", "enabled", "file_security", "maximum_file_size", "created_at")
    list_filter = ("project", "enabled")
    search_fields = ("uid", "name")
    readonly_fields = ("uid", "project", "created_at", "updated_at")


@admin.register(File)
class FileAdmin(admin.ModelAdmin):
    list_display = ("uid", "name", "bucket", "status", "mime_type", "size_original", "created_at")
    list_filter = ("status", "bucket__project")
    search_fields = ("uid", "name")
    readonly_fields = [f.name for f in File._meta.fields]

    def has_add_permission(self, request):
        return False
