"""WSGI entry point (the gunicorn baseline): ``backend.wsgi:application``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")

from apps.core.drivers.db.django_sync import limit_statements  # noqa: E402  (needs settings loaded)
from apps.core.http.serving.limits import wsgi_limits  # noqa: E402

# gunicorn bounds the request head (backend/gunicorn_conf.py); the total header bytes are checked here.
application = wsgi_limits(get_wsgi_application())
limit_statements()
