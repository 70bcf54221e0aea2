"""The admin site: the product's name, a home page with the server's health, a "View site"
link that leads somewhere real, and a sign-in limited against password guessing."""

from __future__ import annotations

from django.conf import settings
from django.contrib.admin import AdminSite

from apps.adminsite import health

PRODUCT = "Appwrite-compatible backend"


class ProductAdminSite(AdminSite):
    """``admin.site`` (installed by ``apps.adminsite.apps.ProductAdminConfig``).

    "View site" goes to the web demo at ``/demo/`` when ``DEMO_ENABLED``; otherwise the link is
    hidden (the server has no other page for people). The home page adds a "Server" box
    (:func:`apps.adminsite.health.snapshot`) above the apps.
    """

    site_header = f"{PRODUCT} administration"
    site_title = f"{PRODUCT} admin"
    index_title = "Operations"
    index_template = "adminsite/index.html"
    # The home page lists every model; a sidebar repeating it takes a quarter of a 1280 px
    # window from the change lists.
    enable_nav_sidebar = False

    @property
    def site_url(self) -> str | None:
        return "/demo/" if settings.DEMO_ENABLED else None

    @property
    def login_form(self):
        from apps.adminsite.forms import ThrottledLoginForm  # imports auth models: not at import time

        return ThrottledLoginForm

    def login(self, request, extra_context=None):
        """Django's admin sign-in with :class:`apps.adminsite.forms.ThrottledLoginForm`; a sign-in
        refused by the throttle is the form with its error, answered 429 (503 when the limiter's
        store is unavailable) with ``Retry-After`` in seconds."""
        response = super().login(request, extra_context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        refusal = getattr(form, "refusal", None)
        if refusal is not None:
            response.status_code = 429 if refusal.reason == "locked" else 503
            response["Retry-After"] = str(refusal.retry_after)
        return response

    def get_urls(self):
        """Django's admin pages plus the operator pages (:mod:`apps.adminsite.operators`)."""
        from apps.adminsite import operators

        return operators.urls(self) + super().get_urls()

    def index(self, request, extra_context=None):
        from apps.adminsite.background import THRESHOLD

        return super().index(request, {"server": health.snapshot(), "threshold": THRESHOLD,
                                       "heartbeat": f"{settings.TASKS_HEARTBEAT:g}",
                                       "timeout": f"{settings.TASKS_WORKER_TIMEOUT:g}",
                                       "request_log_on": settings.REQUEST_LOG, **(extra_context or {})})
