"""Work done outside requests: outgoing mail (SMTP) and the task queue with its worker."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import PRODUCTION, _env, _env_bool, _env_float, _env_int, _env_list
from backend.settings.data import DATABASE_URL

# --- Mail (apps.core.domain.mail; docs/mail-and-worker.md) -----------------------------------------------
# Appwrite's _APP_SMTP_* settings. With no SMTP_HOST a development server writes every mail to the
# log (logger "apps.mail") and a production server answers the routes that send mail with 503
# general_smtp_disabled.
SMTP_HOST = _env("SMTP_HOST")
SMTP_SECURE = _env("SMTP_SECURE").lower()  # "" (plain, STARTTLS if the server offers nothing), "tls", "ssl"
if SMTP_SECURE not in {"", "tls", "ssl"}:
    raise ImproperlyConfigured(f"SMTP_SECURE must be empty, 'tls' or 'ssl', got {SMTP_SECURE!r}")
SMTP_PORT = _env_int("SMTP_PORT", {"ssl": 465, "tls": 587}.get(SMTP_SECURE, 25), minimum=1)
SMTP_USERNAME = _env("SMTP_USERNAME")
SMTP_PASSWORD = _env("SMTP_PASSWORD")
SMTP_TIMEOUT = _env_float("SMTP_TIMEOUT", 15.0, positive=True)  # seconds per SMTP connection/command
MAIL_SENDER_EMAIL = _env("MAIL_SENDER_EMAIL", "noreply@localhost")
MAIL_SENDER_NAME = _env("MAIL_SENDER_NAME", "Appwrite")
# Whether the routes that send mail work at all (Appwrite: only with _APP_SMTP_HOST).
MAIL_ENABLED = bool(SMTP_HOST) or not PRODUCTION

if SMTP_HOST:
    MAILERS = {"default": {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {
            "host": SMTP_HOST,
            "port": SMTP_PORT,
            "username": SMTP_USERNAME,
            "password": SMTP_PASSWORD,
            "use_tls": SMTP_SECURE == "tls",
            "use_ssl": SMTP_SECURE == "ssl",
            "timeout": SMTP_TIMEOUT,
        },
    }}
else:
    MAILERS = {"default": {"BACKEND": "apps.core.domain.mail.LogBackend"}}
DEFAULT_FROM_EMAIL = MAIL_SENDER_EMAIL

# --- Tasks (django.tasks on the django-tasks-db backend; docs/mail-and-worker.md) -----------------
# The queue is a table in the project's database: a task is enqueued in the same transaction as
# the write that needs it, survives restarts of every process, and works on the embedded SQLite.
TASK_QUEUES = ("default", "mails", "deletes", "messaging", "webhooks", "functions")
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": list(TASK_QUEUES)}}
# A failed task runs again after TASKS_RETRY_DELAY seconds, doubling each time up to
# TASKS_RETRY_MAX_DELAY, until it has run TASKS_MAX_ATTEMPTS times; then it is recorded as failed.
TASKS_MAX_ATTEMPTS = _env_int("TASKS_MAX_ATTEMPTS", 5, minimum=1)
TASKS_RETRY_DELAY = _env_float("TASKS_RETRY_DELAY", 10.0, positive=True)
TASKS_RETRY_MAX_DELAY = _env_float("TASKS_RETRY_MAX_DELAY", 900.0, positive=True)
# Webhook deliveries (queue "webhooks", apps/webhooks): seconds to wait for a receiver's answer.
# A failed delivery is retried like every task (above).
WEBHOOK_TIMEOUT = _env_float("WEBHOOK_TIMEOUT", 15.0, positive=True)
# Failed deliveries in a row after which a webhook is disabled (Appwrite's
# _APP_WEBHOOK_MAX_FAILED_ATTEMPTS); updating it with enabled=true starts the count again.
WEBHOOK_MAX_FAILED_ATTEMPTS = _env_int("WEBHOOK_MAX_FAILED_ATTEMPTS", 10, minimum=1)
# In production a webhook whose host resolves to a non-public address (loopback, private ranges)
# is refused, as Appwrite does; networks listed here (CIDR, comma-separated) are allowed anyway.
WEBHOOK_ALLOW_NETWORKS = _env_list("WEBHOOK_ALLOW_NETWORKS", [])
# Seconds an idle worker waits before it looks for ready tasks again.
TASKS_POLL_INTERVAL = _env_float("TASKS_POLL_INTERVAL", 1.0, positive=True)
# Every worker marks itself alive every TASKS_HEARTBEAT seconds; a task left running by a worker
# that has not done so for TASKS_WORKER_TIMEOUT seconds (killed, host lost) is run again.
TASKS_HEARTBEAT = _env_float("TASKS_HEARTBEAT", 5.0, positive=True)
TASKS_WORKER_TIMEOUT = _env_float("TASKS_WORKER_TIMEOUT", 60.0, positive=True)
if TASKS_WORKER_TIMEOUT <= TASKS_HEARTBEAT:
    raise ImproperlyConfigured("TASKS_WORKER_TIMEOUT must be longer than TASKS_HEARTBEAT")
# Run a worker thread inside the ASGI server process (the embedded quick start has no separate
# worker). Default: on for the embedded default (no DATABASE_URL) in development.
TASKS_IN_PROCESS_WORKER = _env_bool("TASKS_IN_PROCESS_WORKER", not DATABASE_URL and not PRODUCTION)
# Background deletes (a table's rows, a bucket's files, a user's sessions): rows per statement, and
# seconds one task run works before it queues its continuation (so mail never waits long).
TASKS_PURGE_BATCH = _env_int("TASKS_PURGE_BATCH", 2000, minimum=1)
TASKS_PURGE_SECONDS = _env_float("TASKS_PURGE_SECONDS", 5.0, positive=True)

# --- Messaging (apps.messaging; docs/messaging.md) ------------------------------------------------
# The key that encrypts the messaging providers' credentials at rest (any text; an AES-256-GCM key is
# derived from it with HKDF-SHA256). Empty: derived from SECRET_KEY, so changing SECRET_KEY then
# makes stored provider credentials unreadable (their deliveries fail until the provider is updated).
MESSAGING_KEY = _env("MESSAGING_KEY")
# Base URLs that replace the providers' public API hosts, "name=url" comma-separated (names: twilio,
# vonage, msg91, telesign, textmagic, mailgun, sendgrid, resend, fcm, apns): a proxy, or local
# servers in tests. Empty: each provider's documented public host.
MESSAGING_ENDPOINTS = _env("MESSAGING_ENDPOINTS")
# Seconds one HTTP request to an SMS/push/email API may take before the delivery fails (and retries).
MESSAGING_TIMEOUT = _env_float("MESSAGING_TIMEOUT", 15.0, positive=True)
