from django.core.management.base import BaseCommand, CommandError

from apps.projects.services import ProjectError, project_create, project_ensure


class Command(BaseCommand):
    help = "Create a project. Prints the project ID."

    def add_arguments(self, parser):
        parser.add_argument("project_id", help="public project ID, or unique() for a generated one")
        parser.add_argument("--name", default="", help="display name (default: the ID)")
        parser.add_argument(
            "--origin", action="append", default=[],
            help="allowed web origin, e.g. http://localhost:5173 (repeatable; * allows any)",
        )
        parser.add_argument(
            "--exists-ok", action="store_true",
            help="if the project exists, only add the given origins (so setup scripts can rerun)",
        )

    def handle(self, *args, project_id, name, origin, exists_ok, **options):
        try:
            if exists_ok and project_id != "unique()":
                project = project_ensure(project_id=project_id, name=name, origins=origin)
            else:
                project = project_create(project_id=project_id, name=name, origins=origin)
        except ProjectError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(project.uid)
