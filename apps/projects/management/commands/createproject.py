from argparse import BooleanOptionalAction

from django.core.management.base import BaseCommand, CommandError

from apps.projects.services import ProjectError, project_create, project_ensure

# Command-line option -> Project field (authentication settings; README "Project authentication
# settings"). Numbers first, then on/off switches (--x / --no-x).
NUMBERS = {
    "user_limit": ("auth_limit", "most users the project may have (0 = no limit)"),
    "max_sessions": ("auth_max_sessions", "sessions per user; the oldest beyond it end (0 = no limit)"),
    "session_length": ("auth_duration", "seconds a new session lasts (60-31536000)"),
    "password_min_length": ("auth_password_min_length", "shortest password accepted (8-256)"),
    "password_history": ("auth_password_history", "refuse the last N passwords (0 = off, at most 20)"),
}
SWITCHES = {
    "password_dictionary": ("auth_password_dictionary", "refuse common passwords"),
    "personal_data_check": ("auth_personal_data_check", "refuse passwords containing the user's ID, name, email or phone"),
    "invalidate_sessions": ("auth_invalidate_sessions", "a password change or recovery ends the other sessions"),
    "email_password": ("auth_email_password", "email/password sign-up and sign-in"),
    "magic_url": ("auth_magic_url", "magic URL sign-in"),
    "email_otp": ("auth_email_otp", "email code sign-in"),
    "anonymous": ("auth_anonymous", "anonymous sessions"),
    "invites": ("auth_invites", "team invitations"),
    "jwt": ("auth_jwt", "JWTs"),
    "phone": ("auth_phone", "phone sign-in"),
    # Team member privacy: what signed-in users (not API keys) see of a team's members.
    "memberships_user_name": ("memberships_user_name", "members see each other's names"),
    "memberships_user_email": ("memberships_user_email", "members see each other's emails"),
    "memberships_mfa": ("memberships_mfa", "members see each other's MFA status"),
    "memberships_user_id": ("memberships_user_id", "members see each other's user IDs"),
    "memberships_user_phone": ("memberships_user_phone", "members see each other's phone numbers"),
    "memberships_user_accessed_at": ("memberships_user_accessed_at", "members see each other's last access"),
}


class Command(BaseCommand):
    help = "Create a project (or, with --exists-ok, update one). Prints the project ID."

    def add_arguments(self, parser):
        parser.add_argument("project_id", help="public project ID, or unique() for a generated one")
        parser.add_argument("--name", default="", help="display name (default: the ID)")
        parser.add_argument(
            "--origin", action="append", default=[],
            help="allowed web origin, e.g. http://localhost:5173 (repeatable; * allows any)",
        )
        parser.add_argument(
            "--exists-ok", action="store_true",
            help="if the project exists, only add the given origins and set the given settings (so setup "
                 "scripts can rerun)",
        )
        auth = parser.add_argument_group("authentication settings (unset = keep / Appwrite's default)")
        for option, (_, text) in NUMBERS.items():
            auth.add_argument("--" + option.replace("_", "-"), type=int, default=None, help=text)
        for option, (_, text) in SWITCHES.items():
            auth.add_argument("--" + option.replace("_", "-"), action=BooleanOptionalAction, default=None, help=text)

    def handle(self, *args, project_id, name, origin, exists_ok, **options):
        auth = {field: options[o] for o, (field, _) in {**NUMBERS, **SWITCHES}.items() if options[o] is not None}
        try:
            if exists_ok and project_id != "unique()":
                project = project_ensure(project_id=project_id, name=name, origins=origin, auth=auth)
            else:
                project = project_create(project_id=project_id, name=name, origins=origin, auth=auth)
        except ProjectError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(project.uid)
