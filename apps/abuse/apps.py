"""The abuse app: Appwrite's per-route rate limits (rules table, counters, headers).

At startup the settings' overrides are checked against the rule table, so a misspelt rule
name in ``ABUSE_LIMITS`` stops the server with a clear message instead of being ignored. A system
check (``manage.py check``) also verifies that every /v1 endpoint names an existing rule.
"""

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured


class AbuseConfig(AppConfig):
    name = "apps.abuse"
    label = "abuse"
    verbose_name = "Abuse checks (rate limits)"

    def ready(self):
        from apps.abuse.rules import active_rules

        try:
            active_rules()
        except KeyError as exc:
            raise ImproperlyConfigured(f"ABUSE_LIMITS: {exc.args[0]}") from None
        checks.register(check_endpoint_rules)


def check_endpoint_rules(app_configs=None, **kwargs):
    """Error ``abuse.E001`` for each /v1 endpoint whose ``abuse`` names no rule."""
    from apps.abuse.rules import DEFAULT_RULES
    from apps.core.http.routes import v1_router

    return [
        checks.Error(f"endpoint {ep.name} ({ep.method} {ep.path}) names unknown abuse rule {ep.abuse!r}",
                     hint=f"known rules: {', '.join(sorted(DEFAULT_RULES))}", id="abuse.E001")
        for ep in v1_router().endpoints
        if ep.abuse and ep.abuse not in DEFAULT_RULES
    ]
