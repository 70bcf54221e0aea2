"""URL configuration.

``v1_router`` is the /v1 route table: each app lists its endpoint declarations in its ``urls.py``;
reading this list top to bottom shows the whole API. ``urlpatterns`` serves everything else
through Django: the admin and, with ``DEMO_ENABLED``, the built web demo at ``/demo/``; any other
path is a JSON 404 (``handler404``).
"""

from django.conf import settings
from django.contrib import admin
from django.urls import path, re_path
from django.utils.module_loading import import_string
from django.views.generic import RedirectView

from apps.accounts.urls import endpoints as account_endpoints
from apps.accounts.urls import users_mfa_endpoints
from apps.accounts.urls_users import endpoints as users_endpoints
from apps.audit.urls import endpoints as audit_endpoints
from apps.avatars.urls import endpoints as avatar_endpoints
from apps.core.http.endpoint import Router
from apps.core.urls import endpoints as core_endpoints
from apps.databases.urls import endpoints as database_endpoints
from apps.functions.urls import endpoints as function_endpoints
from apps.graphql.urls import endpoints as graphql_endpoints
from apps.health.urls import endpoints as health_endpoints
from apps.locale.urls import endpoints as locale_endpoints
from apps.messaging.urls import endpoints as messaging_endpoints
from apps.projects.urls import endpoints as project_endpoints
from apps.storage.urls import endpoints as storage_endpoints
from apps.teams.urls import endpoints as team_endpoints
from apps.webhooks.urls import endpoints as webhook_endpoints


def _extra_endpoints():
    """Endpoint lists named in ``V1_EXTRA_ENDPOINTS`` (dotted paths): the load-test tooling's
    benchmark routes with ``BENCH_APP=1``; empty in the product."""
    return [endpoint for dotted in settings.V1_EXTRA_ENDPOINTS for endpoint in import_string(dotted)]


v1_router = Router([
    *core_endpoints,
    *account_endpoints,
    *users_endpoints,
    *team_endpoints,
    *audit_endpoints,
    *users_mfa_endpoints,
    *storage_endpoints,
    *database_endpoints,
    *function_endpoints,
    *health_endpoints,
    *locale_endpoints,
    *avatar_endpoints,
    *project_endpoints,
    *webhook_endpoints,
    *graphql_endpoints,
    *messaging_endpoints,
    *_extra_endpoints(),
])

urlpatterns = [
    path("admin/", admin.site.urls),
]

# Paths nothing serves, and Django's own refusals, answer Appwrite's JSON errors; the admin and
# the demo keep Django's pages (apps.core.http.serving.fallback).
handler400 = "apps.core.http.serving.fallback.bad_request"
handler404 = "apps.core.http.serving.fallback.not_found"
handler500 = "apps.core.http.serving.fallback.server_error"

if settings.DEMO_ENABLED:
    from apps.demo.views import demo_file

    urlpatterns += [
        path("demo", RedirectView.as_view(url="/demo/", permanent=False)),
        re_path(r"^demo/(?P<path>.*)$", demo_file, name="demo"),
    ]
