from django.apps import AppConfig


class AuditConfig(AppConfig):
    """The account audit log: subscribes to the core write-event hook at startup, like realtime."""

    name = "apps.audit"
    label = "audit"
    verbose_name = "Audit log"

    def ready(self) -> None:
        from apps.audit.services import on_writes
        from apps.core.domain import events

        events.subscribe(on_writes)
