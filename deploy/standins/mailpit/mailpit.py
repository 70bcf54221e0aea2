#!/usr/bin/python3
"""Mail catcher standing in for Mailpit: SMTP in, a read-only JSON API out.

``/mailpit`` serves SMTP on MP_SMTP_BIND_ADDR (0.0.0.0:1025) and HTTP on MP_UI_BIND_ADDR
(0.0.0.0:8025); ``/mailpit readyz`` exits 0 when the HTTP side answers (the compose health check).

HTTP (the subset of Mailpit's API v1 that deploy/verify_compose.py reads):
  GET /readyz, /livez                 200 "ok"
  GET /api/v1/messages                {"total", "count", "messages": [{"ID", "From", "To", "Subject",
                                       "Created", "Size", "Snippet"}]}, newest first
  GET /api/v1/message/<ID>            one message: the summary plus "Text", "HTML" and "Headers"
  DELETE /api/v1/messages             removes every message
"""

import asyncio
import email
import email.policy
import json
import os
import sys
import threading
import urllib.request
import uuid
from datetime import UTC, datetime
from email.utils import getaddresses
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller

MESSAGES: list[dict] = []
LOCK = threading.Lock()


def split(addr: str, default_port: int) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return (host or "0.0.0.0"), int(port or default_port)


def people(value: str | None) -> list[dict]:
    return [{"Name": name, "Address": address} for name, address in getaddresses([value or ""]) if address]


class Sink:
    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's hook name)
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        text = msg.get_body(("plain",))
        html = msg.get_body(("html",))
        text = text.get_content() if text is not None else ""
        item = {
            "ID": uuid.uuid4().hex,
            "MessageID": (msg.get("Message-ID") or "").strip("<>"),
            "From": (people(msg.get("From")) or [{"Name": "", "Address": envelope.mail_from}])[0],
            "To": people(msg.get("To")) or [{"Name": "", "Address": a} for a in envelope.rcpt_tos],
            "Subject": str(msg.get("Subject") or ""),
            "Created": datetime.now(UTC).isoformat(),
            "Size": len(envelope.content),
            "Snippet": " ".join(text.split())[:250],
            "Text": text,
            "HTML": html.get_content() if html is not None else "",
            "Headers": {k: [str(v) for v in msg.get_all(k)] for k in dict.fromkeys(msg.keys())},
        }
        with LOCK:
            MESSAGES.insert(0, item)
        print(f"mail from {envelope.mail_from} to {','.join(envelope.rcpt_tos)}: {item['Subject']}", flush=True)
        return "250 Message accepted"


SUMMARY = ("ID", "MessageID", "From", "To", "Subject", "Created", "Size", "Snippet")


class Api(BaseHTTPRequestHandler):
    def send(self, status: int, body, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        path = self.path.split("?", 1)[0]
        with LOCK:
            messages = list(MESSAGES)
        if path in ("/readyz", "/livez"):
            self.send(200, "ok", "text/plain")
        elif path == "/api/v1/messages":
            summaries = [{k: m[k] for k in SUMMARY} for m in messages]
            self.send(200, {"total": len(messages), "count": len(messages), "start": 0, "messages": summaries})
        elif path.startswith("/api/v1/message/"):
            wanted = path.rsplit("/", 1)[1]
            found = next((m for m in messages if m["ID"] == wanted or (wanted == "latest" and m is messages[0])), None)
            self.send(200, found) if found else self.send(404, "message not found", "text/plain")
        elif path == "/":
            rows = "".join(f"<li>{m['Created']} {m['To'][0]['Address'] if m['To'] else ''}: {m['Subject']}</li>"
                           for m in messages)
            self.send(200, f"<!doctype html><title>Mail</title><ul>{rows}</ul>", "text/html")
        else:
            self.send(404, "not found", "text/plain")

    def do_DELETE(self):  # noqa: N802
        if self.path.split("?", 1)[0] == "/api/v1/messages":
            with LOCK:
                MESSAGES.clear()
            self.send(200, "ok", "text/plain")
        else:
            self.send(404, "not found", "text/plain")

    def log_message(self, format, *args):  # noqa: A002 (the base class's signature)
        pass


def serve() -> None:
    smtp_host, smtp_port = split(os.environ.get("MP_SMTP_BIND_ADDR", ""), 1025)
    http_host, http_port = split(os.environ.get("MP_UI_BIND_ADDR", ""), 8025)
    controller = Controller(Sink(), hostname=smtp_host, port=smtp_port)
    controller.start()
    print(f"smtp on {smtp_host}:{smtp_port}, http on {http_host}:{http_port}", flush=True)
    ThreadingHTTPServer((http_host, http_port), Api).serve_forever()


def readyz() -> int:
    _, port = split(os.environ.get("MP_UI_BIND_ADDR", ""), 8025)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return 0 if response.status == 200 else 1
    except OSError:
        return 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["readyz"]:
        sys.exit(readyz())
    asyncio.set_event_loop(asyncio.new_event_loop())
    serve()
