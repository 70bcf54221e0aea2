import logging
import os
import socket

from django.core.management.base import BaseCommand, CommandError
from django.utils.crypto import get_random_string

from apps.core.tasks.worker import Worker


class Command(BaseCommand):
    help = ("Run the background worker: sends mail and finishes large deletes, with retries "
            "(TASKS_MAX_ATTEMPTS, back-off from TASKS_RETRY_DELAY). Stops after the running task on SIGTERM.")

    def add_arguments(self, parser):
        parser.add_argument("--queues", default="*",
                            help="comma-separated queues to take tasks from: mails, deletes, messaging, webhooks, functions, default; * = all")
        parser.add_argument("--batch", action="store_true", help="run every ready task, then exit")
        parser.add_argument("--max-tasks", type=int, default=None, help="exit after this many tasks")
        parser.add_argument("--worker-id", default="",
                            help="unique ID of this worker (default: host, pid and a random suffix)")

    def handle(self, *args, queues, batch, max_tasks, worker_id, verbosity, **options):
        from django.conf import settings

        names = [q.strip() for q in queues.split(",") if q.strip()]
        unknown = set(names) - {"*", *settings.TASK_QUEUES}
        if not names or unknown:
            raise CommandError(f"unknown queue(s) {sorted(unknown)}; known: {', '.join(settings.TASK_QUEUES)} or *")
        if max_tasks is not None and max_tasks < 1:
            raise CommandError("--max-tasks must be at least 1")
        worker_id = worker_id or f"{socket.gethostname()[:30]}-{os.getpid()}-{get_random_string(8)}"
        if len(worker_id) > 64:
            raise CommandError("--worker-id must be at most 64 characters")
        if verbosity > 1:
            logging.getLogger("apps.worker").setLevel(logging.DEBUG)
        Worker(queue_names=names, worker_id=worker_id, batch=batch, max_tasks=max_tasks).start()
