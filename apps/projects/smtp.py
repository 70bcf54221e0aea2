"""Mail through a project's own SMTP server (the Project service's custom SMTP settings)."""

from __future__ import annotations

from email.utils import formataddr

from django.core.mail import EmailMessage
from django.core.mail.backends.smtp import EmailBackend
from django.tasks import task

SUBJECT = "Custom SMTP email sample"
BODY = ("This is a test email sent through the custom SMTP server of project {name}. "
        "If you received it, the settings work.\n")


def project_connection(project):
    """A Django SMTP connection with ``project``'s settings (``smtp_secure``: ``tls`` =
    STARTTLS, ``ssl`` = implicit TLS)."""
    from django.conf import settings

    from apps.accounts.oauth2.crypto import decrypt

    return EmailBackend(alias=f"project-smtp:{project.uid}", host=project.smtp_host, port=project.smtp_port, username=project.smtp_username,
                        password=decrypt(project.smtp_password) if project.smtp_password else "",
                        use_tls=project.smtp_secure == "tls", use_ssl=project.smtp_secure == "ssl",
                        timeout=settings.SMTP_TIMEOUT)


@task(queue_name="mails", priority=10)
def send_smtp_test(*, project_pk: int, recipient: str) -> None:
    """Send the test mail to ``recipient`` through the project's SMTP server; errors propagate
    (the worker retries)."""
    from apps.projects.models import Project

    project = Project.objects.get(pk=project_pk)
    message = EmailMessage(
        subject=SUBJECT, body=BODY.format(name=project.name), to=[recipient],
        from_email=formataddr((project.smtp_sender_name, project.smtp_sender_email)),
        reply_to=[formataddr((project.smtp_reply_to_name, project.smtp_reply_to_email))]
        if project.smtp_reply_to_email else None,
        connection=project_connection(project))
    message.send()
