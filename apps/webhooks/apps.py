from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    """Webhooks: subscribes the delivery enqueuer to the core write-event hook at startup."""

    name = "apps.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from apps.core.domain import events
        from apps.webhooks.dispatch import on_writes

        events.subscribe(on_writes)
