"""The operators' admin at ``/admin/``: the site itself (name, home page with the server's health,
"View site"), the staff accounts, and display helpers the apps' admin modules share.

``ProductAdminConfig`` replaces ``django.contrib.admin`` in ``INSTALLED_APPS`` so that
``admin.site`` is :class:`apps.adminsite.site.ProductAdminSite`; ``apps.adminsite`` itself holds
the staff proxy model and the templates and static files of the site. Staff sign-ins are limited
against password guessing (``apps.adminsite.throttle``).
"""
