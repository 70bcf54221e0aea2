import gc

from django.apps import AppConfig
from django.conf import settings


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from apps.core.drivers.db.base import use_fast_json

        use_fast_json()
        # Large freed blocks (image previews' pixels) go back to the system (apps.core.drivers.runtime).
        from apps.core.drivers.runtime import return_large_blocks

        return_large_blocks()
        pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
        if isinstance(pool, dict):  # PostgreSQL: Django's pool drops dead connections at checkout
            from apps.core.drivers.db.faults import check_django_pool

            pool.setdefault("check", check_django_pool)
        # The cyclic GC's first-generation threshold (both builds; gunicorn's --preload master
        # sets it before forking). An ASGI process keeps every in-flight request's objects alive
        # at once, so each collection walks far more of them than a sync worker's; measured on
        # the bulk insert load test: 18.5 -> 15.5 ms CPU per request on ASGI, no change on WSGI.
        if settings.GC_GEN0_THRESHOLD:
            gc.set_threshold(settings.GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
        # The request log (REQUEST_LOG): every worker deletes entries past REQUEST_LOG_DAYS, on or
        # off; an ASGI process writes what it still buffers at lifespan shutdown.
        from apps.core.http import requestlog
        from apps.core.tasks.worker import every_heartbeat

        every_heartbeat(requestlog.delete_expired)
        if requestlog.ENABLED:
            from apps.core.drivers.runtime import serve_in_background

            serve_in_background(requestlog.start, requestlog.stop)
