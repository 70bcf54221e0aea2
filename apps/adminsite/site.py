"""The admin site: the product's name, a home page with the server's health, and a "View site"
link that leads somewhere real."""

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

    def index(self, request, extra_context=None):
        return super().index(request, {"server": health.snapshot(), **(extra_context or {})})
