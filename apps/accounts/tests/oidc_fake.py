"""A small fake OpenID provider for the failure rows the real one cannot be made to produce:
ID tokens with a wrong signature, audience, issuer, expiry or nonce, a token endpoint that
hangs, fails or refuses the client. It signs ID tokens itself with a test RSA key and serves a
discovery document, a key set, an authorization endpoint that approves at once, a token
endpoint and user info. ``mode`` picks the misbehaviour of the next exchange; ``good`` is a
valid provider, so the rows are known to fail for the reason they name.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

MODES = ("good", "bad-signature", "bad-audience", "bad-issuer", "expired", "bad-nonce", "unknown-kid",
         "hang", "error-500", "invalid-client", "not-json")


class FakeProvider:
    def __init__(self, hang_seconds: float = 5):
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
        self.other_key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
        self.mode = "good"
        self.client_id = "fake-client"
        self.hang_seconds = hang_seconds
        self.nonces: dict[str, str] = {}  # code -> nonce from the authorization request
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def discovery_url(self) -> str:
        return self.issuer + "/.well-known/openid-configuration"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _id_token(self, nonce: str, sub: str) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": sub, "aud": self.client_id, "iat": now, "exp": now + 300, "nonce": nonce}
        key, kid = self.key, "k1"
        if self.mode == "bad-signature":
            key = self.other_key
        elif self.mode == "bad-audience":
            claims["aud"] = "someone-else"
        elif self.mode == "bad-issuer":
            claims["iss"] = "https://impostor.example"
        elif self.mode == "expired":
            claims["iat"], claims["exp"] = now - 3600, now - 1800
        elif self.mode == "bad-nonce":
            claims["nonce"] = "not-the-nonce"
        elif self.mode == "unknown-kid":
            kid = "k9"
        return jwt.encode({"alg": "RS256", "kid": kid}, claims, key)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _json(self, data, status=200):
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                url = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/.well-known/openid-configuration":
                    self._json({"issuer": fake.issuer, "authorization_endpoint": fake.issuer + "/authorize",
                                "token_endpoint": fake.issuer + "/token", "userinfo_endpoint": fake.issuer + "/userinfo",
                                "jwks_uri": fake.issuer + "/jwks", "id_token_signing_alg_values_supported": ["RS256"],
                                "token_endpoint_auth_methods_supported": ["client_secret_basic"]})
                elif url.path == "/jwks":
                    self._json(KeySet([fake.key]).as_dict(private=False))
                elif url.path == "/authorize":
                    code = f"code-{time.monotonic_ns()}"
                    fake.nonces[code] = q.get("nonce", "")
                    self.send_response(302)
                    self.send_header("Location", q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]}))
                    self.end_headers()
                elif url.path == "/userinfo":
                    self._json({"sub": "fake-user", "email": "fake-user@example.com", "email_verified": True,
                                "name": "Fake User"})
                else:
                    self._json({"error": "not_found"}, 404)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlsplit(self.path).path != "/token":
                    self._json({"error": "not_found"}, 404)
                    return
                if fake.mode == "hang":
                    time.sleep(fake.hang_seconds)
                    self._json({"error": "too_late"}, 400)
                elif fake.mode == "error-500":
                    body = b"<html>upstream broke</html>"
                    self.send_response(500)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif fake.mode == "invalid-client":
                    self._json({"error": "invalid_client", "error_description": "client authentication failed"}, 401)
                elif fake.mode == "not-json":
                    body = b"access_token=abc"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    nonce = fake.nonces.pop(form.get("code", ""), "")
                    self._json({"access_token": f"at-{time.monotonic_ns()}", "token_type": "Bearer",
                                "expires_in": 3600, "id_token": fake._id_token(nonce, "fake-user")})

        return Handler
