"""Bulk send measurement: one email message to a topic of N subscribers (default 10,000), sent by
one worker process (``manage.py worker --queues messaging``) through a local SMTP server.

Run from the repository root with PostgreSQL and the project's migrations applied to
``DATABASE_URL``'s database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python loadtests/messaging_bulk.py

What it does: starts an SMTP sink (aiosmtpd, in this process, counting the mails it accepts and
keeping none); creates a project with an SMTP provider pointing at it, N users each with an email
target, a topic they are all subscribed to, and the message (rows written directly, the way the
API writes them); enqueues the send; starts the worker and waits until the message is ``sent``.
It prints the time from the worker's start to ``sent`` and the sending rate (from the moment the
recipients are listed, so the worker's start-up is not counted), the worker's
peak resident memory (``VmHWM``) and what the sink received, then removes its project.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")


class Sink:
    """An SMTP server that counts the messages it accepts."""

    def __init__(self):
        from aiosmtpd.controller import Controller

        self.count = 0
        self.lock = threading.Lock()
        sink = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
                with sink.lock:
                    sink.count += len(envelope.rcpt_tos)
                return "250 OK"

        import socket

        with socket.socket() as probe:  # a free port
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=10_000)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from apps.core.domain.ids import unique_id
    from apps.messaging import crypto
    from apps.messaging.tasks import send_message
    from apps.projects.services import project_create

    sink = Sink()
    pid = f"bulk-{unique_id()[:12]}"
    project = project_create(project_id=pid, name=pid, origins=[])
    n = args.targets
    with connection.cursor() as cur:
        cur.execute(
            "INSERT INTO messaging_provider (project_id, uid, name, provider, provider_type, enabled, credentials, "
            "options, created_at, updated_at) VALUES (%s, 'smtp', 'sink', 'smtp', 'email', true, %s, %s, now(), now())",
            [project.pk, crypto.seal({"host": "127.0.0.1", "port": sink.port}, bound_to=f"{project.pk}/smtp"),
             '{"fromEmail": "bulk@example.com", "autoTLS": false}'])
        cur.execute("INSERT INTO messaging_topic (project_id, uid, name, description, subscribe, created_at, "
                    "updated_at) VALUES (%s, 'all', 'all', '', '[]', now(), now()) RETURNING id", [project.pk])
        topic = cur.fetchone()[0]
        cur.execute(
            "INSERT INTO accounts_user (project_id, uid, name, email, phone, password, status, labels, prefs, "
            "email_verification, phone_verification, registration, created_at, updated_at) "
            "SELECT %s, 'u' || g, '', 'u' || g || '@bulk.example.com', '', '', true, '[]', '{}', false, false, now(), "
            "now(), now() FROM generate_series(1, %s) g", [project.pk, n])
        cur.execute("INSERT INTO messaging_target (project_id, user_id, provider_id, uid, name, provider_type, "
                    "identifier, expired, created_at, updated_at) SELECT %s, id, NULL, 't' || id, '', 'email', email, "
                    "false, now(), now() FROM accounts_user WHERE project_id = %s", [project.pk, project.pk])
        cur.execute("INSERT INTO messaging_subscriber (project_id, topic_id, target_id, uid, created_at, updated_at) "
                    "SELECT %s, %s, id, 's' || id, now(), now() FROM messaging_target WHERE project_id = %s",
                    [project.pk, topic, project.pk])
        cur.execute("INSERT INTO messaging_message (project_id, uid, provider_type, topics, users, targets, data, "
                    "status, delivered_total, delivery_errors, created_at, updated_at) VALUES (%s, 'bulk', 'email', "
                    "'[\"all\"]', '[]', '[]', %s, 'processing', 0, '[]', now(), now()) RETURNING id",
                    [project.pk, '{"subject": "Bulk", "content": "Hello", "html": false}'])
        message = cur.fetchone()[0]
    send_message.enqueue(message_id=message, scheduled="")
    connection.close()

    env = {**os.environ, "TASKS_POLL_INTERVAL": "0.1"}
    started = time.monotonic()
    worker = subprocess.Popen([sys.executable, "manage.py", "worker", "--queues", "messaging"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    listed_at = None
    try:
        while True:
            peak = max(peak, peak_rss_kib(worker.pid))
            with connection.cursor() as cur:
                cur.execute("SELECT status, delivered_total FROM messaging_message WHERE id = %s", [message])
                status, delivered = cur.fetchone()
                if listed_at is None:
                    cur.execute("SELECT 1 FROM messaging_delivery WHERE message_id = %s LIMIT 1", [message])
                    if cur.fetchone():
                        listed_at = time.monotonic()
            if status in ("sent", "failed"):
                break
            time.sleep(0.1)
        elapsed = time.monotonic() - started
        sending = time.monotonic() - (listed_at or started)
    finally:
        worker.terminate()
        worker.wait(30)
        with connection.cursor() as cur:
            for table in ("messaging_delivery WHERE message_id IN (SELECT id FROM messaging_message WHERE project_id = %s)",
                          "messaging_message WHERE project_id = %s", "messaging_subscriber WHERE project_id = %s",
                          "messaging_target WHERE project_id = %s", "messaging_topic WHERE project_id = %s",
                          "messaging_provider WHERE project_id = %s", "accounts_user WHERE project_id = %s"):
                cur.execute(f"DELETE FROM {table}", [project.pk])
        project.delete()
        sink.controller.stop()
    print(f"targets: {n}  status: {status}  delivered: {delivered}  received by SMTP: {sink.count}")
    print(f"worker start to sent: {elapsed:.1f} s  (recipients listed to sent: {sending:.1f} s, "
          f"{delivered / sending:.0f} messages/s)")
    print(f"worker peak RSS: {peak / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
