"""``manage.py functionsimages``: build the runtime images now (instead of at the first build).

Needs ``FUNCTIONS_EXECUTOR=docker`` and the engine (``FUNCTIONS_DOCKER_HOST``), and the base
image (``deploy/debian-base.sh``). Prints each image's name; images whose recipe is unchanged
are reused (their tag carries the recipe's hash).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Build the functions' runtime images from Debian packages (no registry needed)."

    def handle(self, *args, **options):
        from django.conf import settings

        from apps.functions.executor import get_executor
        from apps.functions.images import ensure_all

        if not settings.FUNCTIONS_EXECUTOR:
            raise CommandError("No container engine configured: set FUNCTIONS_EXECUTOR=docker and "
                               "FUNCTIONS_DOCKER_HOST (docs/functions.md).")
        try:
            names = ensure_all(get_executor().client)
        except Exception as exc:  # noqa: BLE001 - said plainly, e.g. the base image is missing
            raise CommandError(f"The runtime images could not be built: {exc}. Is the base image there "
                               "(deploy/debian-base.sh)?") from None
        for name in names:
            self.stdout.write(name)
