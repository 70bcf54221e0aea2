import time

from django.conf import settings
from django.contrib.auth.hashers import get_hasher
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Measure the configured password hasher: milliseconds of wall and CPU time per check."

    def add_arguments(self, parser):
        parser.add_argument("-n", type=int, default=50, help="checks to time (default 50)")

    def handle(self, *args, n, **options):
        hasher = get_hasher()
        encoded = hasher.encode("correct horse battery", hasher.salt())
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            hasher.verify("correct horse battery", encoded)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.stdout.write(
            f"{hasher.algorithm} t={settings.ARGON2_TIME_COST} m={settings.ARGON2_MEMORY_COST_KIB}KiB "
            f"p={settings.ARGON2_PARALLELISM}: {wall / n * 1000:.2f} ms wall, {cpu / n * 1000:.2f} ms CPU per check (n={n})"
        )
