import datetime as dt

from django.core.management.base import BaseCommand, CommandError

from apps.core.auth import KEY_SCOPES
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
            raise CommandError(str(exc)) from None
        self.stdout.write(secret)
