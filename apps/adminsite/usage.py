"""The usage page (``usage/``): counts per day over the last 30 days, read from the data's own
timestamps when the page loads (nothing is counted on the API's request path), and the audit
log's newest entries.

Each series is one ``GROUP BY`` day over one table: users and sessions by ``created_at``, rows
and files by ``created_at`` (an update is not a new row: the server keeps a row's last update
time only), function executions and messages by ``created_at``. The internal ``~trash`` project
(deleted resources waiting for the worker) is left out; ``?project=<pk>`` narrows to one project.
Charts are SVG drawn here (no script), each with its numbers in a table.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from apps.adminsite.display import TRASH_PROJECT
from apps.adminsite.pages import guarded

DAYS = 30
RECENT = 25
# Chart geometry (SVG user units; the SVG scales to its box).
WIDTH, HEIGHT, TOP, BOTTOM = 600, 140, 16, 22


@dataclass
class Series:
    key: str
    title: str
    days: list[tuple[dt.date, int]]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.days)

    @property
    def chart(self) -> SafeString:
        return bar_chart(self)


def _sources() -> list[tuple[str, str, Any, str]]:
    """``(key, title, queryset, project path)`` of each series."""
    from apps.accounts.models import Session, User
    from apps.databases.models import Row
    from apps.functions.models import Execution
    from apps.messaging.models import Message
    from apps.storage.models import File

    return [
        ("users", "Users created", User.objects, "project"),
        ("sessions", "Sessions created", Session.objects, "project"),
        ("rows", "Rows created", Row.objects, "table__database__project"),
        ("files", "Files uploaded", File.objects, "project"),
        ("executions", "Function executions", Execution.objects, "project"),
        ("messages", "Messages created", Message.objects, "project"),
    ]


def days_window(today: dt.date) -> list[dt.date]:
    return [today - dt.timedelta(days=DAYS - 1 - i) for i in range(DAYS)]


def series(project_pk: int | None = None, today: dt.date | None = None) -> list[Series]:
    """Each series' counts for the :data:`DAYS` days up to ``today`` (UTC, ``TIME_ZONE``)."""
    today = today or timezone.localdate()
    days = days_window(today)
    start = timezone.make_aware(dt.datetime.combine(days[0], dt.time.min))
    out = []
    for key, title, objects, owner in _sources():
        rows = objects.filter(created_at__gte=start).exclude(**{f"{owner}__uid": TRASH_PROJECT})
        if project_pk is not None:
            rows = rows.filter(**{f"{owner}__id": project_pk})
        counts = dict(rows.annotate(day=TruncDate("created_at")).order_by().values("day")
                      .annotate(n=Count("id")).values_list("day", "n"))
        out.append(Series(key, title, [(day, counts.get(day, 0)) for day in days]))
    return out


def bar_chart(s: Series) -> SafeString:
    """``s`` as an SVG bar chart: one bar per day, the scale's top on the left, the first and last
    day below; named by its title for assistive technology (the table beside it has the numbers)."""
    peak = max((n for _, n in s.days), default=0)
    scale = max(peak, 1)
    step = WIDTH / len(s.days)
    inner = HEIGHT - TOP - BOTTOM
    bars = []
    for i, (day, n) in enumerate(s.days):
        h = round(inner * n / scale, 1)
        bars.append((round(i * step + 1, 1), round(TOP + inner - h, 1), round(step - 2, 1), h, f"{day:%Y-%m-%d}: {n}"))
    rects = format_html_join("", '<rect x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>', bars)
    first, last = s.days[0][0], s.days[-1][0]
    return format_html(
        '<svg class="usage-chart" viewBox="0 0 {w} {h}" role="img" aria-labelledby="chart-{key}-title" '
        'preserveAspectRatio="none" focusable="false"><title id="chart-{key}-title">{title}: {total} in the last '
        '{days} days, at most {peak} a day</title><line x1="0" y1="{base}" x2="{w}" y2="{base}" class="axis"/>'
        '<g class="bars">{rects}</g><text x="2" y="11" class="label">{peak}</text>'
        '<text x="2" y="{ty}" class="label">{first}</text><text x="{w}" y="{ty}" class="label end">{last}</text></svg>',
        w=WIDTH, h=HEIGHT, key=s.key, title=s.title, total=s.total, days=DAYS, peak=peak, base=HEIGHT - BOTTOM,
        rects=rects, ty=HEIGHT - 6, first=f"{first:%m-%d}", last=f"{last:%m-%d}")


def recent_activity(project_pk: int | None = None) -> list:
    """The audit log's newest :data:`RECENT` entries (the account events it records)."""
    from apps.audit.models import Log

    logs = Log.objects.select_related("project", "user").filter(~Q(project__uid=TRASH_PROJECT))
    if project_pk is not None:
        logs = logs.filter(project_id=project_pk)
    return list(logs.order_by("-time", "-id")[:RECENT])


def usage(request, site):
    from apps.projects.models import Project

    projects = list(Project.objects.exclude(uid=TRASH_PROJECT).order_by("uid").values_list("pk", "uid"))
    raw = request.GET.get("project", "")
    chosen = int(raw) if raw.isdigit() and any(pk == int(raw) for pk, _ in projects) else None
    return TemplateResponse(request, "adminsite/usage.html", {
        **site.each_context(request), "title": "Usage", "series": series(chosen), "days": DAYS,
        "projects": projects, "chosen": chosen, "recent": recent_activity(chosen), "recent_limit": RECENT})


def urls(site) -> list:
    return [path("usage/", guarded(site, usage, "audit.view_log"), name="usage")]
