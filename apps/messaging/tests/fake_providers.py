"""Local servers that answer like the SMS, email and push providers' public HTTP APIs, for tests.

Written from each provider's API reference: the request shape (path, form or JSON fields), the
authentication (HTTP Basic, headers, Bearer tokens, OAuth2 JWT-bearer grant, APNs provider JWTs
checked against the test's keys) and the error answers' shapes. Everything accepted is kept in
``received`` as ``(provider, recipient, text)``. A recipient ending in ``0000`` (SMS) or equal to
``gone-token`` (push) is refused the way the provider refuses an unreachable recipient.

``HttpProviders`` serves all HTTP/1.1 APIs on one port (routes by path); ``fake_apns.ApnsServer``
speaks HTTP/2 for APNs.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

TWILIO = ("AC0123456789abcdef", "twilio-token")
VONAGE = ("vonage-key", "vonage-secret")
MSG91 = "msg91-authkey"
TELESIGN = ("telesign-customer", "telesign-key")
TEXTMAGIC = ("tm-user", "tm-key")
MAILGUN = ("mailgun-key", "mg.example.com")
SENDGRID = "SG.sendgrid-key"
SES = ("AKIDEXAMPLE", "ses-secret-key", "eu-west-1")
FCM_PROJECT = "demo-project"


@dataclass
class Keys:
    """The test's push keys: an RSA service account (FCM) and an EC P-256 auth key (APNs)."""

    rsa_private: str
    rsa_public: str
    ec_private: str
    ec_public: str

    @classmethod
    def make(cls) -> Keys:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        def pem(key):
            private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()).decode()
            public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo).decode()
            return private, public

        return cls(*pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)),
                   *pem(ec.generate_private_key(ec.SECP256R1())))


@dataclass
class Received:
    items: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, provider: str, to: str, text: str) -> None:
        with self.lock:
            self.items.append((provider, to, text))

    def to(self, recipient: str) -> list[tuple[str, str, str]]:
        with self.lock:
            return [i for i in self.items if i[1] == recipient]


def _basic(header: str) -> tuple[str, str]:
    if not header.startswith("Basic "):
        return "", ""
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


class _Handler(BaseHTTPRequestHandler):
    server: HttpProviders

    def log_message(self, *args) -> None:
        pass

    def _answer(self, status: int, body, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.raw = raw
        ctype = self.headers.get("Content-Type", "")
        form = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()} if "form" in ctype else {}
        body = json.loads(raw) if "json" in ctype and raw else {}
        path = urllib.parse.urlsplit(self.path).path
        for prefix, handler in ROUTES:
            if path.startswith(prefix):
                return handler(self, path, form, body)
        self._answer(404, {"error": "not found"})


# --- SMS ------------------------------------------------------------------------------------------

def _twilio(h: _Handler, path: str, form: dict, body: dict) -> None:
    sid, token = _basic(h.headers.get("Authorization", ""))
    if (sid, token) != TWILIO or f"/Accounts/{sid}/" not in path:
        return h._answer(401, {"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003", "status": 401})
    if not form.get("To") or not form.get("From") or not form.get("Body"):
        return h._answer(400, {"code": 21604, "message": "A 'To' phone number is required.", "status": 400})
    if form["To"].endswith("0000"):
        return h._answer(400, {"code": 21211, "message": f"The 'To' number {form['To']} is not a valid phone number.", "status": 400})
    h.server.received.add("twilio", form["To"], form["Body"])
    h._answer(201, {"sid": "SM" + "0" * 32, "status": "queued", "to": form["To"], "body": form["Body"]})


def _vonage(h: _Handler, path: str, form: dict, body: dict) -> None:
    if (form.get("api_key"), form.get("api_secret")) != VONAGE:
        return h._answer(200, {"message-count": "1", "messages": [{"status": "4", "error-text": "Bad Credentials"}]})
    if form.get("to", "").endswith("0000"):
        return h._answer(200, {"message-count": "1", "messages": [{"status": "6", "error-text": "Unroutable message - rejected"}]})
    h.server.received.add("vonage", "+" + form["to"], form.get("text", ""))
    h._answer(200, {"message-count": "1", "messages": [{"to": form["to"], "message-id": "0A0000000123ABCD1", "status": "0"}]})


def _msg91(h: _Handler, path: str, form: dict, body: dict) -> None:
    if h.headers.get("authkey") != MSG91:
        return h._answer(401, {"type": "error", "message": "Authentication failure"})
    recipients = body.get("recipients") or []
    if not body.get("template_id") or not recipients:
        return h._answer(400, {"type": "error", "message": "Template ID missing"})
    mobile = recipients[0].get("mobiles", "")
    if mobile.endswith("0000"):
        return h._answer(400, {"type": "error", "message": "Invalid mobile number"})
    h.server.received.add("msg91", "+" + mobile, recipients[0].get("content", ""))
    h._answer(200, {"type": "success", "message": "3763646c3058313530393138"})


def _telesign(h: _Handler, path: str, form: dict, body: dict) -> None:
    if _basic(h.headers.get("Authorization", "")) != TELESIGN:
        return h._answer(401, {"status": {"code": 10004, "description": "Could not find the customer ID"}})
    if form.get("phone_number", "").endswith("0000"):
        return h._answer(400, {"status": {"code": 11000, "description": "Invalid value for parameter phone_number."}})
    h.server.received.add("telesign", "+" + form["phone_number"], form.get("message", ""))
    h._answer(200, {"reference_id": "0123456789ABCDEF0123456789ABCDEF", "status": {"code": 290, "description": "Message in progress"}})


def _textmagic(h: _Handler, path: str, form: dict, body: dict) -> None:
    if (h.headers.get("X-TM-Username"), h.headers.get("X-TM-Key")) != TEXTMAGIC:
        return h._answer(401, {"code": 401, "message": "Unauthorized"})
    if not form.get("text") or form.get("phones", "").endswith("0000"):
        return h._answer(400, {"code": 400, "message": "Validation Failed", "errors": {"fields": {"phones": ["Invalid"]}}})
    h.server.received.add("textmagic", "+" + form["phones"], form["text"])
    h._answer(201, {"id": 49576009, "href": "/api/v2/messages/49576009", "type": "message", "sessionId": 34436600})


# --- email ----------------------------------------------------------------------------------------

def _mailgun(h: _Handler, path: str, form: dict, body: dict) -> None:
    if _basic(h.headers.get("Authorization", "")) != ("api", MAILGUN[0]):
        return h._answer(401, b"Forbidden", "text/plain")
    if path != f"/v3/{MAILGUN[1]}/messages":
        return h._answer(404, {"message": "Domain not found"})
    h.server.received.add("mailgun", form.get("to", ""), form.get("subject", ""))
    h._answer(200, {"id": "<20240101.1@mg.example.com>", "message": "Queued. Thank you."})


def _sendgrid(h: _Handler, path: str, form: dict, body: dict) -> None:
    if h.headers.get("Authorization") != f"Bearer {SENDGRID}":
        return h._answer(401, {"errors": [{"message": "The provided authorization grant is invalid, expired, or revoked", "field": None}]})
    to = body["personalizations"][0]["to"][0]["email"]
    h.server.received.add("sendgrid", to, body.get("subject", ""))
    h._answer(202, b"", "text/plain")


def _sigv4_valid(h: _Handler, path: str) -> bool:
    """AWS Signature Version 4 of the request, recomputed with the test's secret key."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    auth = h.headers.get("Authorization", "")
    fields = dict(part.strip().split("=", 1) for part in auth.removeprefix("AWS4-HMAC-SHA256 ").split(","))
    scope = fields.get("Credential", "").split("/")
    if len(scope) != 5 or scope[0] != SES[0] or scope[2:] != [SES[2], "ses", "aws4_request"]:
        return False
    signed = fields.get("SignedHeaders", "").split(";")
    request = AWSRequest(method="POST", url=h.server.url + path, data=h.raw,
                         headers={name: h.headers.get(name, "") for name in signed})
    request.context["timestamp"] = h.headers.get("X-Amz-Date", "")
    signer = SigV4Auth(Credentials(SES[0], SES[1]), "ses", SES[2])
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return expected == fields.get("Signature")


def _ses(h: _Handler, path: str, form: dict, body: dict) -> None:
    if not _sigv4_valid(h, path):
        h.send_response(403)
        data = json.dumps({"message": "The request signature we calculated does not match the signature you provided."}).encode()
        h.send_header("x-amzn-ErrorType", "SignatureDoesNotMatch")
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        return
    to = body["Destination"]["ToAddresses"][0]
    h.server.received.add("ses", to, body["Content"]["Simple"]["Subject"]["Data"])
    h._answer(200, {"MessageId": "010001-ses-message-id"})


# --- FCM ------------------------------------------------------------------------------------------

def _fcm_token(h: _Handler, path: str, form: dict, body: dict) -> None:
    try:
        claims = jwt.decode(form.get("assertion", ""), h.server.keys.rsa_public, algorithms=["RS256"],
                            audience=f"{h.server.url}/token")
    except jwt.PyJWTError as exc:
        return h._answer(400, {"error": "invalid_grant", "error_description": f"Invalid JWT Signature. ({exc})"})
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" or "firebase.messaging" not in claims.get("scope", ""):
        return h._answer(400, {"error": "invalid_scope"})
    h._answer(200, {"access_token": "ya29.fcm-access", "expires_in": 3599, "token_type": "Bearer"})


def _fcm_send(h: _Handler, path: str, form: dict, body: dict) -> None:
    if h.headers.get("Authorization") != "Bearer ya29.fcm-access":
        return h._answer(401, {"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}})
    if path != f"/v1/projects/{FCM_PROJECT}/messages:send":
        return h._answer(404, {"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND"}})
    message = body.get("message") or {}
    if message.get("token") == "gone-token":
        return h._answer(404, {"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND",
                                         "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}})
    h.server.received.add("fcm", message.get("token", ""), (message.get("notification") or {}).get("title", ""))
    h._answer(200, {"name": f"projects/{FCM_PROJECT}/messages/0:1500415314455276%31bd1c9631bd1c96"})


ROUTES = [
    ("/2010-04-01/Accounts/", _twilio), ("/sms/json", _vonage), ("/api/v5/flow", _msg91),
    ("/v1/messaging", _telesign), ("/api/v2/messages", _textmagic), ("/v3/mail/send", _sendgrid),
    ("/v3/", _mailgun), ("/v2/email/outbound-emails", _ses), ("/token", _fcm_token), ("/v1/projects/", _fcm_send),
]


class HttpProviders(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, keys: Keys):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.keys = keys
        self.received = Received()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def service_account(self) -> dict:
        return {"type": "service_account", "project_id": FCM_PROJECT, "private_key_id": "k1",
                "private_key": self.keys.rsa_private, "client_email": f"sender@{FCM_PROJECT}.iam.gserviceaccount.com",
                "token_uri": f"{self.url}/token"}

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
