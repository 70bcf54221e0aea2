"""Django's error views for everything outside ``/v1`` (``handler404``/``400``/``500`` in
``backend.urls``): Appwrite's JSON error, as ``/v1`` answers, instead of Django's HTML pages.

A path nothing serves is 404 ``general_route_not_found`` (Appwrite answers any unknown path so);
a request Django refuses (e.g. a ``Host`` outside ``ALLOWED_HOSTS``) is 400
``general_bad_request``; a failure is 500 ``general_unknown``. The admin (``/admin``) and the web
demo (``/demo``, when ``DEMO_ENABLED``) are HTML pages for people and keep Django's pages.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views import defaults

from apps.core.http.serving.limits import error_body


def _html(request: HttpRequest) -> bool:
    path = request.path
    return path.startswith("/admin") or (settings.DEMO_ENABLED and path.startswith("/demo"))


def _json(status: int, type: str, message: str) -> HttpResponse:
    response = HttpResponse(error_body(status, message, type), status=status, content_type="application/json")
    response["Cache-Control"] = "no-cache, no-store, must-revalidate"
    return response


NOT_FOUND = "The requested route was not found. Please refer to the API docs and try again."


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """404: ``general_route_not_found`` outside the admin and the demo. A path that is an API route
    once ``/v1`` is put in front of it (an SDK's endpoint set to ``http://host:8000``) says so."""
    if _html(request):
        return defaults.page_not_found(request, exception)
    message = NOT_FOUND
    if _is_v1_route(request.path):
        message += (f" The API's routes start with /v1: did you mean /v1{request.path}? (An SDK's endpoint ends in "
                    "/v1, e.g. http://127.0.0.1:8000/v1.)")
    return _json(404, "general_route_not_found", message)


def _is_v1_route(path: str) -> bool:
    from apps.core.http.routes import v1_router  # the API's routes, imported when first needed

    return len(path) <= 512 and bool(v1_router().methods_for(path))


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """400: ``general_bad_request`` outside the admin and the demo."""
    if _html(request):
        return defaults.bad_request(request, exception or Exception())
    return _json(400, "general_bad_request", "There was an error processing your request.")


def server_error(request: HttpRequest) -> HttpResponse:
    """500: ``general_unknown`` outside the admin and the demo."""
    if _html(request):
        return defaults.server_error(request)
    return _json(500, "general_unknown", "Server Error")
