import datetime as dt

from django.core.management.base import BaseCommand, CommandError

from apps.core.http.auth import KEY_SCOPES
from apps.projects.services import ProjectError, api_key_create


class Command(BaseCommand):
    help = "Create an API key for a project. Prints the key secret alone (shown once, stored hashed)."

    def add_arguments(self, parser):
        parser.add_argument("project_id")
        parser.add_argument("--name", default="", help="display name")
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--scopes", help="comma-separated scopes, e.g. databases.read,rows.write")
        group.add_argument("--all-scopes", action="store_true", help="every scope this server knows")
        parser.add_argument("--expire-days", type=int, default=0, help="expire after N days (0 = never)")

    def handle(self, *args, project_id, name, scopes, all_scopes, expire_days, **options):
        chosen = sorted(KEY_SCOPES) if all_scopes else [s.strip() for s in scopes.split(",") if s.strip()]
        if not chosen:
            raise CommandError("--scopes is empty")
        if expire_days < 0:
            raise CommandError("--expire-days must be >= 0")
        expire = dt.datetime.now(dt.UTC) + dt.timedelta(days=expire_days) if expire_days else None
        try:
            _, secret = api_key_create(project_id=project_id, name=name, scopes=chosen, expire=expire)
        except ProjectError as exc:
            raise CommandError(str(exc) + _missing_project_hint(project_id)) from None
        self.stdout.write(secret)


def _missing_project_hint(project_id: str) -> str:
    """For an unknown project: which database was looked in and the projects it holds (not the
    internal ``~trash``), since a project made on the quick start's SQLite file is not in
    PostgreSQL once ``DATABASE_URL`` is set; and the command that creates it. Empty when the
    project exists (the error was another one)."""
    from django.db import connection

    from apps.projects.models import Project

    if Project.objects.filter(uid=project_id).exists():
        return ""
    names = list(Project.objects.exclude(uid__startswith="~").order_by("uid").values_list("uid", flat=True)[:11])
    held = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "") if names else "no project"
    where = f"{connection.vendor} database {connection.settings_dict['NAME']}"
    return f" in the {where} (it has: {held}); create it with: manage.py createproject {project_id}"
