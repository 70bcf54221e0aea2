"""``manage.py cleanupuploads``: delete abandoned uploads and the bytes no file row names
(``apps.storage.services.cleanup``)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.core.drivers.db import get_database
from apps.core.drivers.runtime import SYNC, run_sync
from apps.storage.services.cleanup import cutoff_of, remove_orphan_objects, uploads_cleanup


class Command(BaseCommand):
    help = ("Delete unfinished uploads idle for STORAGE_UPLOAD_EXPIRY seconds whose writer is gone (their "
            "rows, part files and stored bytes), part directories and (local storage) stored files no file "
            "row names, older than the same age. Safe to run from cron while the server runs.")

    def add_arguments(self, parser):
        parser.add_argument("--expiry", type=float, default=None,
                            help=f"idle seconds (default STORAGE_UPLOAD_EXPIRY={settings.STORAGE_UPLOAD_EXPIRY})")
        parser.add_argument("--limit", type=int, default=10000, help="uploads to remove at most")

    def handle(self, *args, expiry=None, limit=10000, **options):
        db = get_database(SYNC)
        cutoff = cutoff_of(expiry).timestamp()  # before the uploads' sweep: it must not widen
        removed = run_sync(uploads_cleanup(db, SYNC, expiry=expiry, limit=limit))
        orphans = run_sync(remove_orphan_objects(db, SYNC, cutoff))
        self.stdout.write(f"removed {removed} abandoned upload(s) and {orphans} stored file(s) no file row names")
