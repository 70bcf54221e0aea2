from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    """Realtime: subscribes the publisher to the core write-event hook, records events in the
    outbox inside writes' transactions, and runs the outbox relay in every ASGI process."""

    name = "apps.realtime"
    label = "realtime"

    def ready(self) -> None:
        from apps.core.domain import events
        from apps.core.drivers.runtime import serve_in_background
        from apps.realtime.outbox import record, start_relay, stop_relay
        from apps.realtime.publisher import on_writes

        events.subscribe(on_writes)
        events.record_with(record)
        serve_in_background(start_relay, stop_relay)
