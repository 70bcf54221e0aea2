import sys

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import OAuthProvider
from apps.accounts.oauth2 import crypto
from apps.accounts.oauth2.config import ConfigError, keys_rotate, provider_configure
from apps.accounts.oauth2.providers import SPECS


class Command(BaseCommand):
    help = (
        "Configure a project's OAuth2 provider (github, google, gitlab, microsoft, apple, discord, oidc). "
        "The client secret is read from --secret-file or standard input (--secret-stdin), never from the "
        "command line, and stored encrypted. Without settings options, prints the provider's settings; "
        "--list prints every configured provider; --rotate-keys re-encrypts all secrets under the first "
        "key of OAUTH2_SECRET_KEYS."
    )

    def add_arguments(self, parser):
        parser.add_argument("project_id", nargs="?")
        parser.add_argument("provider", nargs="?", choices=sorted(SPECS))
        state = parser.add_mutually_exclusive_group()
        state.add_argument("--enable", action="store_true", help="turn the provider on")
        state.add_argument("--disable", action="store_true", help="turn the provider off")
        parser.add_argument("--client-id")
        secret = parser.add_mutually_exclusive_group()
        secret.add_argument("--secret-file", help="read the client secret (Apple: the .p8 key) from this file")
        secret.add_argument("--secret-stdin", action="store_true", help="read the client secret from stdin")
        secret.add_argument("--clear-secret", action="store_true", help="remove the stored secret")
        parser.add_argument("--discovery-url", help="oidc: the issuer's /.well-known/openid-configuration URL")
        parser.add_argument("--authorization-url", help="oidc: authorization endpoint (instead of discovery)")
        parser.add_argument("--token-url", help="oidc: token endpoint (instead of discovery)")
        parser.add_argument("--userinfo-url", help="oidc: user info endpoint (instead of discovery)")
        parser.add_argument("--tenant", help="microsoft: common, organizations, consumers or a tenant ID")
        parser.add_argument("--base-url", help="gitlab: a self-managed server, e.g. https://gitlab.example.com")
        parser.add_argument("--team-id", help="apple: the developer team ID")
        parser.add_argument("--key-id", help="apple: the ID of the .p8 key")
        parser.add_argument("--list", action="store_true", help="list the configured providers")
        parser.add_argument("--rotate-keys", action="store_true",
                            help="re-encrypt every stored secret under the first OAUTH2_SECRET_KEYS key")

    def handle(self, *args, **o):
        if o["rotate_keys"]:
            try:
                count = keys_rotate()
            except crypto.SecretUnreadable as exc:
                raise CommandError(f"{exc}; nothing was changed") from None
            self.stdout.write(f"re-encrypted {count} row(s)")
            return
        if o["list"]:
            rows = OAuthProvider.objects.select_related("project").order_by("project__uid", "provider")
            if o["project_id"]:
                rows = rows.filter(project__uid=o["project_id"])
            for row in rows:
                self.stdout.write(self._describe(row))
            return
        if not o["project_id"] or not o["provider"]:
            raise CommandError("give a project ID and a provider (or --list / --rotate-keys)")

        values = {name: o[name] for name in ("client_id", "discovery_url", "authorization_url", "token_url",
                                             "userinfo_url", "tenant", "base_url", "team_id", "key_id")
                  if o[name] is not None}
        if o["enable"] or o["disable"]:
            values["enabled"] = bool(o["enable"])
        secret = None
        if o["secret_file"]:
            try:
                with open(o["secret_file"], encoding="utf-8") as f:
                    secret = f.read().strip()
            except OSError as exc:
                raise CommandError(f"cannot read --secret-file: {exc}") from None
        elif o["secret_stdin"]:
            secret = sys.stdin.read().strip()
        elif o["clear_secret"]:
            secret = ""
        if (o["secret_file"] or o["secret_stdin"]) and not secret:
            raise CommandError("the client secret read is empty (use --clear-secret to remove one)")

        if not values and secret is None:
            row = OAuthProvider.objects.filter(project__uid=o["project_id"], provider=o["provider"]).first()
            if row is None:
                raise CommandError(f"{o['provider']} is not configured for project {o['project_id']!r}")
            self.stdout.write(self._describe(row))
            return
        try:
            row = provider_configure(project_uid=o["project_id"], provider=o["provider"], client_secret=secret,
                                     **values)
        except ConfigError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self._describe(row))

    @staticmethod
    def _describe(row: OAuthProvider) -> str:
        parts = [f"{row.project.uid} {row.provider}: {'enabled' if row.enabled else 'disabled'}",
                 f"client_id={row.client_id or '-'}", f"secret={'set' if row.client_secret else 'not set'}"]
        for name in ("discovery_url", "authorization_url", "token_url", "userinfo_url", "tenant", "base_url",
                     "team_id", "key_id"):
            if getattr(row, name):
                parts.append(f"{name}={getattr(row, name)}")
        return " ".join(parts)
