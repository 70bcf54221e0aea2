"""Email senders: SMTP (one connection per send run, ``smtplib``), Mailgun, Sendgrid, Resend.

``data`` is the message's: ``subject``, ``content``, ``html`` (content is HTML), and the
provider's options give the sender and reply-to (the message's ``replyToEmail`` wins).
``data["_files"]`` are the attachments the worker read: ``[(filename, MIME type, bytes)]``.
"""

from __future__ import annotations

import base64
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formataddr, make_msgid

from django.conf import settings

from apps.messaging.senders import DeliveryError, HttpSender, answer_error, endpoint


def _sender(options: dict) -> str:
    return formataddr((options.get("fromName") or "", options.get("fromEmail") or ""))


def _reply_to(options: dict, data: dict) -> str:
    email = data.get("replyToEmail") or options.get("replyToEmail") or ""
    name = data.get("replyToName") or options.get("replyToName") or ""
    return formataddr((name, email)) if email else ""


def _files(data: dict) -> list[tuple[str, str, bytes]]:
    return data.get("_files") or []


def build_mime(options: dict, identifier: str, data: dict) -> EmailMessage:
    """The message as MIME: text or HTML body, then the attachments."""
    msg = EmailMessage()
    msg["Subject"] = data.get("subject", "")
    msg["From"] = _sender(options)
    msg["To"] = identifier
    msg["Message-ID"] = make_msgid()
    if reply := _reply_to(options, data):
        msg["Reply-To"] = reply
    if options.get("mailer"):
        msg["X-Mailer"] = options["mailer"]
    if data.get("html"):
        msg.set_content("This message is in HTML.")
        msg.add_alternative(data.get("content", ""), subtype="html")
    else:
        msg.set_content(data.get("content", ""))
    for name, mime, content in _files(data):
        maintype, _, subtype = (mime if "/" in mime else "application/octet-stream").partition("/")
        msg.add_attachment(content, maintype=maintype, subtype=subtype, filename=name)
    return msg


def _b64(content: bytes) -> str:
    return base64.b64encode(content).decode()


class SmtpSender:
    """SMTP to ``host`` (``host[:port]``, the first of ``;``-separated hosts), ``encryption``
    ``ssl`` (implicit TLS), ``tls`` (STARTTLS required) or none (STARTTLS when ``autoTLS`` and
    the server offers it); login when ``username`` is set."""

    def __init__(self, credentials: dict, options: dict):
        self.credentials, self.options = credentials, options
        self.conn: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        host = str(self.credentials.get("host") or "").split(";")[0].strip()
        encryption = self.options.get("encryption") or ""
        for scheme in ("tls://", "ssl://"):
            if host.startswith(scheme):
                encryption, host = scheme[:3], host[len(scheme):]
        port = int(self.credentials.get("port") or 587)
        if ":" in host:
            host, _, given = host.rpartition(":")
            port = int(given)
        timeout = settings.MESSAGING_TIMEOUT
        try:
            if encryption == "ssl":
                conn = smtplib.SMTP_SSL(host, port, timeout=timeout, context=ssl.create_default_context())
            else:
                conn = smtplib.SMTP(host, port, timeout=timeout)
                conn.ehlo()
                if encryption == "tls" or (self.options.get("autoTLS", True) and conn.has_extn("starttls")):
                    conn.starttls(context=ssl.create_default_context())
                    conn.ehlo()
            if self.credentials.get("username"):
                conn.login(self.credentials["username"], self.credentials.get("password") or "")
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryError(f"SMTP {host}:{port}: {type(exc).__name__}: {exc}") from exc
        return conn

    def send(self, identifier: str, data: dict) -> None:
        msg = build_mime(self.options, identifier, data)
        for attempt in (1, 2):  # a connection the server closed since the last mail is opened again once
            if self.conn is None:
                self.conn = self._connect()
            try:
                self.conn.send_message(msg, from_addr=self.options.get("fromEmail") or None, to_addrs=[identifier])
                return
            except smtplib.SMTPServerDisconnected as exc:
                self.conn = None
                if attempt == 2:
                    raise DeliveryError(f"SMTP: {exc}") from exc
            except smtplib.SMTPResponseException as exc:
                raise DeliveryError(f"SMTP {exc.smtp_code}: {exc.smtp_error.decode(errors='replace')}") from exc
            except (OSError, smtplib.SMTPException) as exc:
                self.conn = None
                raise DeliveryError(f"SMTP: {type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.quit()
            except (OSError, smtplib.SMTPException):
                pass
            self.conn = None


class MailgunSender(HttpSender):
    """``POST /v3/{domain}/messages`` (form), HTTP Basic ``api``:``apiKey``; EU hosts with
    ``isEuRegion``."""

    def send(self, identifier: str, data: dict) -> None:
        base = endpoint("mailgun-eu" if self.credentials.get("isEuRegion") else "mailgun")
        form = {"from": _sender(self.options), "to": identifier, "subject": data.get("subject", ""),
                ("html" if data.get("html") else "text"): data.get("content", "")}
        if reply := _reply_to(self.options, data):
            form["h:Reply-To"] = reply
        files = [("attachment", (name, content, mime)) for name, mime, content in _files(data)] or None
        r = self.post(f"{base}/v3/{self.credentials.get('domain', '')}/messages", data=form, files=files,
                      auth=("api", self.credentials.get("apiKey", "")))
        if r.status_code != 200:
            raise DeliveryError("Mailgun " + answer_error(r, "message"))


def _json_mail(self, identifier: str, data: dict) -> dict:
    return {"from": _sender(self.options), "to": [identifier], "subject": data.get("subject", ""),
            ("html" if data.get("html") else "text"): data.get("content", "")}


class SendgridSender(HttpSender):
    """``POST /v3/mail/send`` (JSON, Bearer ``apiKey``); 202 is success."""

    def send(self, identifier: str, data: dict) -> None:
        body = {"personalizations": [{"to": [{"email": identifier}]}],
                "from": {"email": self.options.get("fromEmail", ""), "name": self.options.get("fromName") or None},
                "subject": data.get("subject", ""),
                "content": [{"type": "text/html" if data.get("html") else "text/plain", "value": data.get("content", "")}]}
        reply_email = data.get("replyToEmail") or self.options.get("replyToEmail")
        if reply_email:
            body["reply_to"] = {"email": reply_email}
        if _files(data):
            body["attachments"] = [{"content": _b64(c), "filename": n, "type": m} for n, m, c in _files(data)]
        r = self.post(f"{endpoint('sendgrid')}/v3/mail/send", json=body,
                      headers={"Authorization": f"Bearer {self.credentials.get('apiKey', '')}"})
        if r.status_code not in (200, 202):
            raise DeliveryError("Sendgrid " + answer_error(r, "errors.0.message"))


class ResendSender(HttpSender):
    """``POST /emails`` (JSON, Bearer ``apiKey``)."""

    def send(self, identifier: str, data: dict) -> None:
        body = _json_mail(self, identifier, data)
        if reply := _reply_to(self.options, data):
            body["reply_to"] = reply
        if _files(data):
            body["attachments"] = [{"filename": n, "content": _b64(c)} for n, _, c in _files(data)]
        r = self.post(f"{endpoint('resend')}/emails", json=body,
                      headers={"Authorization": f"Bearer {self.credentials.get('apiKey', '')}"})
        if r.status_code != 200:
            raise DeliveryError("Resend " + answer_error(r, "message"))


class SesSender:
    """Amazon SES API v2 ``SendEmail`` (``POST /v2/email/outbound-emails``) through boto3,
    signed with AWS Signature Version 4 from ``accessKey``/``secretKey`` in ``region``."""

    def __init__(self, credentials: dict, options: dict):
        import boto3
        from botocore.config import Config

        self.credentials, self.options = credentials, options
        self.client = boto3.client(
            "sesv2", region_name=credentials.get("region") or "us-east-1",
            aws_access_key_id=credentials.get("accessKey", ""), aws_secret_access_key=credentials.get("secretKey", ""),
            endpoint_url=endpoint("ses") or None,
            config=Config(connect_timeout=settings.MESSAGING_TIMEOUT, read_timeout=settings.MESSAGING_TIMEOUT,
                          retries={"max_attempts": 1}))

    def send(self, identifier: str, data: dict) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        body = {"Html" if data.get("html") else "Text": {"Data": data.get("content", ""), "Charset": "UTF-8"}}
        kw = {"FromEmailAddress": _sender(self.options), "Destination": {"ToAddresses": [identifier]},
              "Content": {"Simple": {"Subject": {"Data": data.get("subject", ""), "Charset": "UTF-8"}, "Body": body}}}
        if reply := _reply_to(self.options, data):
            kw["ReplyToAddresses"] = [reply]
        if _files(data):  # attachments travel in a raw MIME message
            kw["Content"] = {"Raw": {"Data": build_mime(self.options, identifier, data).as_bytes()}}
        try:
            self.client.send_email(**kw)
        except ClientError as exc:
            err = exc.response.get("Error", {})
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
            raise DeliveryError(f"SES HTTP {status}: {err.get('Code', '')}: {err.get('Message', '')}") from exc
        except BotoCoreError as exc:
            raise DeliveryError(f"SES: {exc}") from exc

    def close(self) -> None:
        self.client.close()


SENDERS = {"smtp": SmtpSender, "mailgun": MailgunSender, "sendgrid": SendgridSender, "resend": ResendSender,
           "ses": SesSender}
