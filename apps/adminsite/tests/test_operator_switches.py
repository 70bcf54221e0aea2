"""A project's service and protocol switches on its admin page (``apps.adminsite.switch_pages``):
listed as ``GET /v1/project`` answers them, switched through ``PATCH /v1/project/services/{id}``
and ``/v1/project/protocols/{id}``; the API then refuses keyless requests to what is off, and its
refusals of a bad switch show as the page's message with nothing changed."""

from __future__ import annotations

import re

from django.urls import reverse

from apps.adminsite.tests.seed import assert_locale_and_graphql_off
from apps.projects.api.project import PROTOCOLS, SERVICES
from conftest import Api


def _post(client, blocker, url: str, switch: str):
    with blocker.unblock():
        return client.post(url, {"switch": switch}, follow=True)


def _get(client, blocker, url: str):
    with blocker.unblock():
        return client.get(url)


def _state(api: Api) -> dict[str, bool]:
    """``{"services/<id>": enabled, "protocols/<id>": enabled}`` as the API answers them."""
    project = api.call("GET", "/project", key=True).json()
    return {f"{kind}/{item['$id']}": item["enabled"] for kind in ("services", "protocols") for item in project[kind]}


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_switch_services_and_protocols(admin_client, django_db_blocker, api: Api):
    page_url = reverse("admin:projects_project_change", args=[api.project.pk])
    url = reverse("admin:operator_project_switch", args=[api.project.pk])
    page = _get(admin_client, django_db_blocker, page_url).content.decode()
    assert f'action="{url}"' in page
    for service in SERVICES:
        assert f'value="services/{service}/off" id="switch-service-{service}"' in page, service
    for protocol in PROTOCOLS:
        assert f'value="protocols/{protocol}/off" id="switch-protocol-{protocol}"' in page, protocol

    off = _post(admin_client, django_db_blocker, url, "services/locale/off")
    assert off.redirect_chain == [(page_url + "#project-switches", 302)]
    assert _messages(off) == [f"The locale service of {api.project.id} is off: requests without an API key get "
                              "503 general_service_disabled."]
    shown = off.content.decode()
    assert re.search(r'data-switch="services/locale" class="switch-off">\s*<th scope="row"><code>locale</code></th>'
                     r'\s*<td class="switch-state"><strong>off</strong></td>\s*<td>refused: 503 '
                     r'general_service_disabled</td>', shown)
    assert 'value="services/locale/on" id="switch-service-locale"' in shown
    off = _post(admin_client, django_db_blocker, url, "protocols/graphql/off")
    assert f"The graphql protocol of {api.project.id} is off" in _messages(off)[0]

    state = _state(api)
    assert state == {**{k: True for k in state}, "services/locale": False, "protocols/graphql": False}
    assert len(state) == len(SERVICES) + len(PROTOCOLS)
    # The live server refuses keyless requests to what is off and serves the rest; a key is served.
    assert_locale_and_graphql_off(api)

    on = _post(admin_client, django_db_blocker, url, "services/locale/on")
    assert _messages(on) == [f"The locale service of {api.project.id} is on."]
    assert 'value="services/locale/off" id="switch-service-locale"' in on.content.decode()
    assert _state(api) == {**state, "services/locale": True}

    # The API's refusal of an ID it does not serve; a switch the page never offers; nothing changes.
    for bad, message in (("services/vcs/off", "(general_argument_invalid)"),
                         ("protocols/ftp/on", "(general_argument_invalid)"), ("services/locale", "Unknown switch."), ("teams/locale/off", "Unknown switch."),
                         ("services/locale/maybe", "Unknown switch."), ("services//off", "Unknown switch.")):
        refused = _post(admin_client, django_db_blocker, url, bad)
        assert refused.redirect_chain == [(page_url + "#project-switches", 302)], bad
        [shown] = list(refused.context["messages"])
        assert shown.level_tag == "error" and message in str(shown), (bad, str(shown))
    assert _state(api) == {**state, "services/locale": True}
    assert _get(admin_client, django_db_blocker, url)["Location"] == page_url + "#project-switches"


def test_switches_need_the_change_permission(client, django_db_blocker, api: Api):
    """Staff who may only view projects see the switches' state, without buttons, and a switch
    they post is refused (403) with nothing changed."""
    from django.contrib.auth.models import Permission
    from django.contrib.auth.models import User as Staff

    with django_db_blocker.unblock():
        viewer, _ = Staff.objects.get_or_create(username="project-viewer", defaults={"is_staff": True})
        viewer.user_permissions.set([Permission.objects.get(codename="view_project", content_type__app_label="projects")])
        client.force_login(viewer)
    page = _get(client, django_db_blocker, reverse("admin:projects_project_change", args=[api.project.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="project-switches"' in text and 'data-switch="services/locale" class="switch-on"' in text
    assert 'name="switch"' not in text
    refused = _post(client, django_db_blocker, reverse("admin:operator_project_switch", args=[api.project.pk]),
                    "services/locale/off")
    assert refused.status_code == 403
    assert all(_state(api).values())
