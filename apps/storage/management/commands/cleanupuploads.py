"""``manage.py cleanupuploads``: delete abandoned chunked uploads (README "Storage")."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.core.db import get_database
from apps.core.runtime import SYNC, run_sync
from apps.storage.services.uploads import uploads_cleanup


class Command(BaseCommand):
    help = ("Delete unfinished uploads with no new chunk for STORAGE_UPLOAD_EXPIRY seconds "
            "(their rows and part files). Safe to run from cron while the server runs.")

    def add_arguments(self, parser):
        parser.add_argument("--expiry", type=float, default=None,
                            help=f"idle seconds (default STORAGE_UPLOAD_EXPIRY={settings.STORAGE_UPLOAD_EXPIRY})")
        parser.add_argument("--limit", type=int, default=10000, help="uploads to remove at most")

    def handle(self, *args, expiry=None, limit=10000, **options):
        removed = run_sync(uploads_cleanup(get_database(SYNC), SYNC, expiry=expiry, limit=limit))
        self.stdout.write(f"removed {removed} abandoned upload(s)")
