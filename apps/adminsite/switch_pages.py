"""A project's service and protocol switches on its admin page, switched through the Project
service (``docs/project-service.md``):

* the project's page lists every service and protocol as ``GET /v1/project`` answers them
  (:func:`switches`, shown below its form by ``admin/projects/project/change_form.html``), each
  with a button that switches it;
* ``projects/<pk>/switches/`` (POST ``switch=<services|protocols>/<id>/<on|off>``) ->
  ``PATCH /v1/project/services/{serviceId}`` or ``PATCH /v1/project/protocols/{protocolId}``
  with ``enabled``, then back to the project's page with the outcome as a message.

A switched-off service or protocol refuses requests without an API key (503
``general_service_disabled``, 403 ``general_api_disabled``); keys, and so the admin's own calls,
are never refused. The write is the endpoint's: the same ID check, the same row lock, the same
cache drop (running servers see it within ``PROJECT_CACHE_TTL`` seconds; the process that served
the page at once).
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse

from apps.adminsite.api_call import call
from apps.adminsite.pages import guarded, operator
from apps.core.errors import AppwriteError

# kind (the API's path segment) -> (its name on the page, what a request without a key gets when off)
KINDS = {"services": ("service", "503 general_service_disabled"),
         "protocols": ("protocol", "403 general_api_disabled")}


def switches(project) -> list[dict]:
    """``[{kind, label, refused, entries: [{id, enabled}]}]`` of ``project`` (a model instance), the
    ``services`` and ``protocols`` of the Project service's answer (``project_model``)."""
    from apps.projects.api.project import project_model

    model = project_model(project)
    return [{"kind": kind, "label": label, "refused": refused,
             "entries": [{"id": item["$id"], "enabled": item["enabled"]} for item in model[kind]]}
            for kind, (label, refused) in KINDS.items()]


def switch(request, site, pk: int):
    from apps.projects.models import Project

    project = get_object_or_404(Project, pk=pk)
    back = reverse("admin:projects_project_change", args=[project.pk]) + "#project-switches"
    if request.method != "POST":
        return redirect(back)
    parts = request.POST.get("switch", "").split("/")
    kind, ident, state = parts if len(parts) == 3 else ("", "", "")
    if kind not in KINDS or not ident or state not in ("on", "off"):
        messages.error(request, "Unknown switch.")
        return redirect(back)
    label, refused = KINDS[kind]
    try:
        call(project.uid, operator(request), "PATCH", f"/project/{kind}/{ident}", {"enabled": state == "on"})
    except AppwriteError as err:
        messages.error(request, f"{err.message} ({err.type})")
        return redirect(back)
    if state == "on":
        messages.success(request, f"The {ident} {label} of {project.name} is on.")
    else:
        messages.success(request, f"The {ident} {label} of {project.name} is off: requests without an API key "
                                  f"get {refused}.")
    return redirect(back)


def urls(site) -> list:
    return [path("operator/projects/<int:pk>/switches/", guarded(site, switch, "projects.change_project"),
                 name="operator_project_switch")]
