"""WSGI entry point (the gunicorn baseline): ``backend.wsgi:application``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")

application = get_wsgi_application()

from apps.core.db.django_sync import limit_statements  # noqa: E402  (needs settings loaded)

limit_statements()
