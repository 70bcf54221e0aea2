"""The account lifecycle through the official web SDK 27 under Node (tests/websdk): the SDK
runs each flow, the mail arrives at the real SMTP server process through the worker process,
and the test hands the link or code it read from the mail back to the SDK."""

from __future__ import annotations

import time

import pyotp
import pytest

from conftest import ORIGIN
from tests.mail import code_in, link_in
from tests.websdk import run_node_dialog


def _answer(smtp):
    def answer(question: dict) -> str:
        if question["need"] == "totp":
            return pyotp.TOTP(question["secret"]).now()
        (mail,) = smtp.wait_for(to=question["to"])
        return link_in(mail) if question["need"] == "link" else code_in(mail)

    return answer


@pytest.mark.parametrize("flow", ["verification", "recovery", "magic-url", "email-code", "mfa"])
def test_flow_through_the_web_sdk(asgi_server, app_project, mail_worker, smtp_server, flow):
    email = f"web-{flow}-{time.monotonic_ns()}@example.com"
    lines, _ = run_node_dialog("account_lifecycle.mjs", asgi_server.endpoint, app_project.id, flow, email,
                               f"{ORIGIN}/{flow}", answer=_answer(smtp_server))
    result = lines[-1]["result"]
    if flow == "verification":
        assert result == {"sameToken": True, "emailVerification": True, "reuse": 401}
    elif flow == "recovery":
        assert result == {"oldPassword": 401, "email": email}
    elif flow == "magic-url":
        assert result["provider"] == "magic-url" and result["email"] == email and result["emailVerification"] is True
        assert len(result["phrase"].split()) == 2
    elif flow == "email-code":
        assert result == {"factors": ["email"], "email": email}
    else:
        assert result["uri"] is True and result["codes"] == 6 and result["blocked"] == 401
        assert result["factors"] == {"totp": True, "email": False, "phone": False, "recoveryCode": True,
                                     "custom": False}
        assert result["sessionFactors"] == ["password", "totp"] and result["email"] == email
