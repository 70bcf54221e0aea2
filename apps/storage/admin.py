"""Admin views of buckets and files: read-mostly (bytes and uploads are managed by the API).

Image files get a thumbnail rendered by the server's own preview code (``apps.storage.preview``)
at ``<file>/thumbnail/``, a staff-only URL of this admin.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin
from django.http import Http404, HttpResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from apps.adminsite.display import EMPTY, HidesTrashProject, ProjectFilter, readable_list, size, size_exact
from apps.adminsite.forms import LinesField, PermissionsField, api_rule
from apps.core.domain.permissions import CONTAINER_ACTIONS
from apps.storage import backends, preview
from apps.storage.api import inputs
from apps.storage.models import Bucket, File

THUMBNAIL = 96  # pixels, the square a list thumbnail is cropped to
PREVIEW = 320  # pixels, the width of the change page's preview


def has_preview(file: File) -> bool:
    """True for a ready image file small enough for the preview code."""
    return (file.status == "ready" and file.mime_type in preview.PREVIEWABLE
            and file.size_actual <= settings.STORAGE_PREVIEW_MAX_SIZE)


class BucketForm(forms.ModelForm):
    permissions = PermissionsField(actions=CONTAINER_ACTIONS)
    allowed_file_extensions = LinesField(rows=3, help_text="One a line, without the dot (empty: any).",
                                         rule=api_rule(inputs.BucketFields, "allowedFileExtensions"))

    class Meta:
        model = Bucket
        fields = ("name", "enabled", "file_security", "maximum_file_size", "permissions", "allowed_file_extensions",
                  "compression", "encryption", "antivirus", "transformations")


@admin.register(Bucket)
class BucketAdmin(HidesTrashProject, admin.ModelAdmin):
    form = BucketForm
    list_display = ("uid", "name", "project__uid", "enabled", "file_security", "max_size", "created_at")
    list_filter = (("project", ProjectFilter), "enabled")
    search_fields = ("uid", "name")
    readonly_fields = ("uid", "project", "created_at", "updated_at")

    @admin.display(description="maximum file size", ordering="maximum_file_size")
    def max_size(self, obj: Bucket) -> str:
        return size(obj.maximum_file_size)


@admin.register(File)
class FileAdmin(admin.ModelAdmin):
    list_display = ("thumbnail", "short_name", "uid", "bucket", "status", "mime", "human_size", "created_at")
    list_display_links = ("thumbnail", "short_name")
    list_filter = ("status", ("bucket__project", ProjectFilter))
    search_fields = ("uid", "name")
    list_select_related = ("bucket",)
    fields = ("uid", "name", "image", "project", "bucket", "folder", "status", "mime", "original_size",
              "stored_size", "chunks_total", "chunks_uploaded", "signature", "key", "permission_list",
              "created_at", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="name", ordering="name")
    def short_name(self, obj: File) -> str:
        return Truncator(obj.name).chars(40)

    @admin.display(description="MIME type")
    def mime(self, obj: File) -> str:
        return obj.mime_type or EMPTY

    @admin.display(description="size", ordering="size_original")
    def human_size(self, obj: File) -> str:
        return size(obj.size_original)

    @admin.display(description="size")
    def original_size(self, obj: File) -> str:
        return size_exact(obj.size_original)

    @admin.display(description="stored size")
    def stored_size(self, obj: File) -> str:
        return size_exact(obj.size_actual)

    @admin.display(description="permissions")
    def permission_list(self, obj: File) -> str:
        return readable_list(obj.permissions)

    @admin.display(description="")
    def thumbnail(self, obj: File) -> str:
        if not has_preview(obj):
            return EMPTY
        url = reverse("admin:storage_file_thumbnail", args=[obj.pk])
        return format_html('<img class="thumbnail" src="{}?size={}" alt="" loading="lazy" width="48" height="48">',
                           url, THUMBNAIL)

    @admin.display(description="preview")
    def image(self, obj: File) -> str:
        if not has_preview(obj):
            return "(not an image)"
        url = reverse("admin:storage_file_thumbnail", args=[obj.pk])
        return format_html('<img class="preview" src="{}?size={}" alt="{}">', url, PREVIEW, obj.name)

    def get_urls(self):
        view = self.admin_site.admin_view(self.thumbnail_view)
        return [path("<int:pk>/thumbnail/", view, name="storage_file_thumbnail"), *super().get_urls()]

    def thumbnail_view(self, request, pk: int):
        """A JPEG/PNG/... rendering of an image file: ``?size=96`` a square crop, ``?size=320`` a
        320-pixel-wide preview. 404 for a missing, non-image or undecodable file."""
        file = self.get_object(request, str(pk))
        if file is None or not self.has_view_permission(request, file) or not has_preview(file):
            raise Http404("no preview")
        square = request.GET.get("size") != str(PREVIEW)
        try:
            data = backends.read_head(file.key, file.size_actual)
            body, content_type = preview.render(data, file.mime_type, width=THUMBNAIL if square else PREVIEW,
                                                height=THUMBNAIL if square else 0)
        except (FileNotFoundError, ValueError):
            raise Http404("no preview") from None
        response = HttpResponse(body, content_type=content_type)
        response["Cache-Control"] = "private, max-age=300"
        return response
