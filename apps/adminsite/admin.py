"""Staff accounts: Django's user admin, shown as "Administrators (staff)" instead of "Users";
and the request log of core (:mod:`apps.adminsite.requestlog`)."""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin  # registers auth.User (this app comes before auth)
from django.contrib.auth.models import User

from apps.adminsite import requestlog  # noqa: F401  (registers the request log's page)
from apps.adminsite.models import Administrator

admin.site.unregister(User)


@admin.register(Administrator)
class AdministratorAdmin(UserAdmin):
    pass
