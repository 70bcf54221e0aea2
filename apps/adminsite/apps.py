from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AdminSiteConfig(AppConfig):
    default = True
    name = "apps.adminsite"
    label = "adminsite"
    verbose_name = "Staff"


class ProductAdminConfig(admin_apps.AdminConfig):
    """``django.contrib.admin`` with this project's site as ``admin.site``."""

    default = False
    default_site = "apps.adminsite.site.ProductAdminSite"
