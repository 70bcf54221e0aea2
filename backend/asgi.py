"""ASGI entry point: ``backend.asgi:application``.

http -> Django's ASGI handler (the /v1 adapter middleware serves the API);
websocket -> the realtime app (apps.realtime.consumer); lifespan -> pool shutdown.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")

django_app = get_asgi_application()

from apps.core.http.serving.asgi_app import build_application  # noqa: E402  (needs settings loaded)
from apps.realtime.consumer import realtime_app  # noqa: E402

application = build_application(django_app, websocket_app=realtime_app)
