"""The Messaging page's example (docs/messaging.md), run as written against a live server, its
worker and a real SMTP server."""

from __future__ import annotations

import subprocess
import sys

from tests import docs
from tests.mail import text_of


def test_messaging_example_runs_as_written(api, live_env, messaging_worker, smtp_server):
    code = docs.messaging_example()
    code = code.replace('"http://127.0.0.1:8000/v1"', repr(api.server.endpoint)).replace(
        'set_project("demo")', f'set_project({api.project.id!r})').replace("port=1025", f"port={smtp_server.port}")
    out = subprocess.run([sys.executable, "-c", code], env={**live_env, "APPWRITE_KEY": api.project.key},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == docs.expected_lines(code)[0].split() == ["sent", "1"]
    mail = smtp_server.wait_for(to="reader@example.com", subject="This week")[0]
    assert "Hello, readers!" in text_of(mail)
