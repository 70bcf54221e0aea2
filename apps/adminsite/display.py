"""How the admin shows stored values: lists of strings one per line, JSON pretty-printed, byte
counts as human sizes. Shared by the apps' ``admin`` modules; the classes they use are styled by
``adminsite/admin.css`` (on every admin page, through ``admin/base_site.html``)."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.db.models import Q
from django.template.defaultfilters import filesizeformat
from django.utils.html import format_html, format_html_join

EMPTY = "-"


def readable_list(values) -> str:
    """``["read(\\"any\\")", ...]`` as an HTML list, one string per line (escaped); ``-`` when empty."""
    if not values:
        return EMPTY
    return format_html('<ul class="plain-list">{}</ul>', format_html_join("", "<li>{}</li>", ((v,) for v in values)))


def pretty_json(value) -> str:
    """``value`` as indented JSON in a ``<pre>`` (escaped), non-ASCII kept as is."""
    return format_html('<pre class="json">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def size(num_bytes: int | None) -> str:
    """A byte count for a list column: ``1.2 MB``."""
    return EMPTY if num_bytes is None else filesizeformat(num_bytes)


def size_exact(num_bytes: int | None) -> str:
    """A byte count for a detail page: ``1.2 MB (1,234,567 bytes)``; ``557 bytes`` below 1 KB."""
    if num_bytes is None:
        return EMPTY
    return filesizeformat(num_bytes) if num_bytes < 1024 else f"{filesizeformat(num_bytes)} ({num_bytes:,} bytes)"


class ForeignKeyFilter(admin.SimpleListFilter):
    """A change list filter on one foreign key, by primary key: ``?<parameter_name>=<pk>``
    keeps the rows whose ``<parameter_name>_id`` is ``pk`` (a value that is not a number keeps
    none). Subclasses set ``title``, ``parameter_name`` and ``lookups``; :meth:`chosen` is the
    pk asked for, or ``None``."""

    def chosen(self) -> int | None:
        value = self.value()
        return int(value) if value and value.isdigit() else None

    def queryset(self, request, queryset):
        value = self.value()
        if value is None:
            return queryset
        pk = self.chosen()
        return queryset.none() if pk is None else queryset.filter(**{f"{self.parameter_name}_id": pk})


# The internal project that holds deleted resources until the worker removes them
# (``apps.projects.trash``): never a project an operator means to filter by or pick.
TRASH_PROJECT = "~trash"
NOT_TRASH = ~Q(uid=TRASH_PROJECT)


class ProjectFilter(admin.RelatedFieldListFilter):
    """A change list's "By project" filter without the internal ``~trash`` project: use
    ``list_filter = (("project", ProjectFilter), ...)``."""

    def field_choices(self, field, request, model_admin):
        ordering = self.field_admin_ordering(field, request, model_admin)
        return field.get_choices(include_blank=False, ordering=ordering, limit_choices_to=NOT_TRASH)


class HidesTrashProject:
    """A ``ModelAdmin`` mixin: its project pickers (foreign keys to projects) leave out ``~trash``."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model._meta.label == "projects.Project":
            kwargs["queryset"] = db_field.related_model.objects.filter(NOT_TRASH)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class LabelledInlineForm(forms.ModelForm):
    """A tabular inline's form whose inputs name themselves (``aria-label`` = the field's label):
    Django's tabular inlines put the labels in the table's header only, so screen readers (and
    axe-core's "Form elements must have labels", critical) find none on the inputs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.widget.attrs.setdefault("aria-label", str(field.label))


class ReadOnlyAdmin(admin.ModelAdmin):
    """A model shown to operators but written only by the API, the worker or the server itself
    (audit entries, function records, the request log): no add, change or delete here."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
