"""The usage page (``apps.adminsite.usage``): per-day counts of what a project's data says was
created (users, sessions, rows, files, executions, messages) over 30 days, as SVG charts with
their numbers, and the audit log's newest entries; nothing on the API's request path."""

from __future__ import annotations

import datetime as dt
import re

from django.urls import reverse
from django.utils import timezone

from apps.adminsite.tests.seed import seed
from apps.adminsite.usage import DAYS, Series, bar_chart
from conftest import Api


def _page(client, blocker, url: str) -> str:
    with blocker.unblock():
        response = client.get(url)
    assert response.status_code == 200, response.content.decode()[-2000:]
    return response.content.decode()


def _totals(page: str) -> dict[str, int]:
    return {key: int(n) for key, n in re.findall(r'id="usage-(\w+)" data-total="(\d+)"', page)}


def test_usage_of_one_project(admin_client, django_db_blocker, api: Api):
    data = seed(api)  # one user with one session, two rows, two files
    home = _page(admin_client, django_db_blocker, reverse("admin:index"))
    url = reverse("admin:usage")
    assert f'href="{url}"' in home
    page = _page(admin_client, django_db_blocker, f"{url}?project={api.project.pk}")
    assert _totals(page) == {"users": 1, "sessions": 1, "rows": 2, "files": 2, "executions": 0, "messages": 0}
    today = timezone.localdate().isoformat()
    assert re.search(rf"<td>{today}</td><td>2</td>", page)  # rows and files, today
    assert page.count('role="img"') == 6 and "Rows created: 2 in the last 30 days" in page
    # Recent activity: the seeded user's audit entries.
    assert "session.create" in page and data["user"]["email"] in page
    everything = _totals(_page(admin_client, django_db_blocker, url))
    assert everything["rows"] >= 2 and everything["users"] >= 1
    # An unknown project is "all projects".
    assert _totals(_page(admin_client, django_db_blocker, f"{url}?project=999999999")) == everything


def test_chart_draws_one_bar_per_day_scaled_to_the_busiest():
    start = dt.date(2026, 1, 1)
    days = [(start + dt.timedelta(days=i), 0) for i in range(DAYS)]
    days[-1], days[3] = (days[-1][0], 8), (days[3][0], 2)
    svg = str(bar_chart(Series("rows", "Rows <created>", days)))
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', svg)]
    assert len(heights) == DAYS and heights[3] * 4 == heights[-1] and heights[0] == 0
    assert "Rows &lt;created&gt;: 10 in the last 30 days, at most 8 a day" in svg
    assert "<title>2026-01-30: 8</title>" in svg and ">01-01</text>" in svg and ">01-30</text>" in svg
