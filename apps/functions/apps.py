from django.apps import AppConfig


class FunctionsConfig(AppConfig):
    name = "apps.functions"
    label = "functions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.core.domain import events
        from apps.core.drivers.runtime import serve_in_background
        from apps.core.tasks.worker import every_heartbeat
        from apps.functions import maintenance
        from apps.functions.triggers import on_events

        events.subscribe(on_events)  # event triggers: functions whose ``events`` match
        # executions of stopped processes, deployments past their retention (apps.functions.maintenance)
        every_heartbeat(maintenance.periodic)
        serve_in_background(maintenance.start_recovery, maintenance.stop_recovery)
