"""Form fields for lists of strings that the admin edits as text, one item a line, instead of a
JSON array typed into a box; and the admin's throttled sign-in form."""

from __future__ import annotations

import pydantic
from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from apps.adminsite import throttle
from apps.core.domain import permissions
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
    API's ``permissions`` parameter (``apps.core.domain.permissions.normalize``: ``write`` expands to the
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


class ThrottledLoginForm(AdminAuthenticationForm):
    """The admin's sign-in form, with failed sign-ins limited per client IP and per username
    (:mod:`apps.adminsite.throttle`). While a counter is at its limit the password is not
    checked, a correct one included, and the form shows :attr:`refusal`'s message;
    :class:`apps.adminsite.site.ProductAdminSite` then answers 429 (503 when the limiter's store
    is unavailable) with ``Retry-After``."""

    refusal: throttle.Refused | None = None
    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "locked": "Too many failed sign-in attempts for this account or from this address. "
                  "Try again in %(minutes)s minute(s).",
        "unavailable": "Sign-in is temporarily unavailable (the rate limiter cannot be reached). "
                       "Try again shortly.",
    }

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return self.cleaned_data
        try:
            attempt = throttle.begin(self.request, username)
        except throttle.Refused as refused:
            self.refusal = refused
            raise ValidationError(self.error_messages[refused.reason], code=refused.reason,
                                  params={"minutes": max(1, -(-refused.retry_after // 60))}) from None
        try:
            super().clean()
        except ValidationError:
            attempt.failed()
            raise
        except BaseException:
            attempt.abandoned()
            raise
        attempt.succeeded()
        return self.cleaned_data
