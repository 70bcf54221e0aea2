"""What every operator page shares: the form page, an API call whose refusal becomes the form's
error, the operator's name for the API key (``admin: <staff user>``) and the URL wrapper that
checks the page's Django permission."""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse

from apps.core.errors import AppwriteError


def page(request, site, title: str, form, back: str, submit: str, *, intro: str = "", links=(),
         danger: bool = False):
    """``adminsite/operator_form.html``: ``intro`` (safe HTML, e.g. from ``format_html``) above
    the form, ``links`` (``(url, text, id)``) beside the submit button; ``danger`` for a delete."""
    return TemplateResponse(request, "adminsite/operator_form.html", {
        **site.each_context(request), "title": title, "form": form, "back": back, "submit": submit,
        "intro": intro, "links": links, "danger": danger,
        "multipart": any(isinstance(f.field, forms.FileField) for f in form),
    })


def attempt(form, request, fn):
    """Run ``fn()`` (an API call); an :class:`AppwriteError` becomes the form's error. Returns
    the answer or ``None``."""
    try:
        return fn()
    except AppwriteError as err:
        form.add_error(None, f"{err.message} ({err.type})")
        return None


def operator(request) -> str:
    return request.user.get_username()


def lines(text: str) -> list[str]:
    """The non-empty lines of a textarea, stripped."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def guarded(site, fn, permission: str):
    """``fn(request, site, **kw)`` wrapped by ``site.admin_view`` (staff sign-in, CSRF, no
    caching), answering 403 unless the user has ``permission`` (a superuser has them all)."""
    def run(request, **kw):
        if not request.user.has_perm(permission):
            raise PermissionDenied
        return fn(request, site, **kw)
    return site.admin_view(run)
