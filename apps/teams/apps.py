from django.apps import AppConfig


class TeamsConfig(AppConfig):
    """Teams and memberships. At startup it gives the session lookup (``apps.accounts``) the SQL
    that reads a user's confirmed memberships, so team roles come with the caller's session, and
    registers the older response formats of its models."""

    name = "apps.teams"
    label = "teams"
    verbose_name = "Teams and memberships"

    def ready(self) -> None:
        from apps.core.http.auth import set_memberships_sql
        from apps.teams import formats
        from apps.teams.selectors import MEMBERSHIPS_SQL

        set_memberships_sql(MEMBERSHIPS_SQL)
        formats.register()
