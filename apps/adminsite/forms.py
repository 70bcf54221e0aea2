"""Form fields for lists of strings that the admin edits as text, one item a line, instead of a
JSON array typed into a box."""

from __future__ import annotations

import pydantic
from django import forms
from django.core.exceptions import ValidationError

from apps.core import permissions
from apps.core.errors import AppwriteError


def api_rule(params: type[pydantic.BaseModel], name: str) -> pydantic.TypeAdapter:
    """The type of parameter ``name`` of an API input model (with its validators), for
    :class:`LinesField`'s ``rule``: the admin accepts what the API accepts."""
    return pydantic.TypeAdapter(params.model_fields[name].rebuild_annotation())


class LinesField(forms.CharField):
    """A ``list[str]`` edited in a textarea, one item a line; blank lines are dropped and each
    line is stripped. An empty box is ``[]``. ``rule`` (a pydantic ``TypeAdapter`` of the API's
    own parameter type) checks and converts the list; its messages become the field's errors."""

    def __init__(self, *, rows: int = 4, rule: pydantic.TypeAdapter | None = None, **kwargs):
        self.rule = rule
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": rows, "cols": 60}))
        super().__init__(**kwargs)

    def clean(self, value) -> list[str]:
        lines = super().clean(value)
        if self.rule is None:
            return lines
        try:
            return self.rule.validate_python(lines)
        except pydantic.ValidationError as exc:
            raise ValidationError("; ".join(error["msg"].removeprefix("Value error, ") for error in exc.errors())) from None

    def prepare_value(self, value):
        return "\n".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value) -> list[str]:
        if isinstance(value, list):
            return value
        return [line.strip() for line in (value or "").splitlines() if line.strip()]


class PermissionsField(LinesField):
    """Permission strings such as ``read("any")``, one a line, checked and normalised like the
    API's ``permissions`` parameter (``apps.core.permissions.normalize``: ``write`` expands to the
    ``actions`` given). Raises ``ValidationError`` with the API's message for a bad line."""

    def __init__(self, *, actions: tuple[str, ...], **kwargs):
        self.actions = actions
        kwargs.setdefault("help_text", 'One a line, e.g. read("any") or update("team:editors").')
        super().__init__(**kwargs)

    def clean(self, value) -> list[str]:
        lines = super().clean(value)
        try:
            return permissions.normalize(lines, self.actions)
        except AppwriteError as exc:
            raise ValidationError(exc.message) from None
