from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    """Realtime: subscribes the publisher to the core write-event hook at startup."""

    name = "apps.realtime"
    label = "realtime"

    def ready(self) -> None:
        from apps.core import events
        from apps.realtime.publisher import on_writes

        events.subscribe(on_writes)
