"""Push senders.

* FCM (HTTP v1): an OAuth2 access token from the service account (a JWT signed RS256 with its
  ``private_key``, exchanged at its ``token_uri`` for the ``firebase.messaging`` scope, RFC 7523),
  then ``POST /v1/projects/{project_id}/messages:send`` with ``{"message": {token, notification,
  data, android, apns}}``. An ``UNREGISTERED`` error (HTTP 404) means the token is gone.
* APNs: HTTP/2 ``POST /3/device/{token}`` with a provider token (JWT ES256 from ``authKey``, key ID
  ``authKeyId``, issuer ``teamId``), ``apns-topic: bundleId``; errors ``{"reason": ...}``, 410 (or
  ``BadDeviceToken``/``Unregistered``) means the token is gone. ``sandbox`` uses the development
  host.
"""

from __future__ import annotations

import time

import jwt

from apps.messaging.senders import DeliveryError, HttpSender, answer_error, endpoint

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
_GONE = {"UNREGISTERED", "Unregistered", "BadDeviceToken", "ExpiredToken"}


def _strings(data: dict | None) -> dict:
    return {str(k): v if isinstance(v, str) else str(v) for k, v in (data or {}).items()}


class FcmSender(HttpSender):
    token: str | None = None

    def _access_token(self) -> str:
        if self.token:
            return self.token
        account = self.credentials.get("serviceAccountJSON") or {}
        token_uri = account.get("token_uri") or "https://oauth2.googleapis.com/token"
        now = int(time.time())
        try:
            assertion = jwt.encode({"iss": account.get("client_email", ""), "scope": FCM_SCOPE, "aud": token_uri,
                                    "iat": now, "exp": now + 3600}, account.get("private_key", ""), algorithm="RS256")
        except Exception as exc:  # a missing or malformed private key
            raise DeliveryError(f"FCM: the service account's private key cannot sign: {exc}") from exc
        r = self.post(token_uri, data={"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                       "assertion": assertion})
        if r.status_code != 200:
            raise DeliveryError("FCM token " + answer_error(r, "error_description", "error"))
        self.token = r.json().get("access_token") or ""
        return self.token

    def send(self, identifier: str, data: dict) -> None:
        project = (self.credentials.get("serviceAccountJSON") or {}).get("project_id", "")
        notification = {k: data[k] for k in ("title", "body", "image") if data.get(k)}
        message: dict = {"token": identifier}
        if notification:
            message["notification"] = notification
        if data.get("data"):
            message["data"] = _strings(data["data"])
        android = {k: data[k] for k in ("icon", "sound", "color", "tag") if data.get(k)}
        if data.get("action"):
            android["click_action"] = data["action"]
        if android or data.get("priority"):
            message["android"] = {"priority": "high" if data.get("priority") == "high" else "normal"}
            if android:
                message["android"]["notification"] = android
        r = self.post(f"{endpoint('fcm')}/v1/projects/{project}/messages:send", json={"message": message},
                      headers={"Authorization": f"Bearer {self._access_token()}"})
        if r.status_code != 200:
            code = ""
            try:
                details = r.json()["error"].get("details") or []
                code = next((d.get("errorCode", "") for d in details if "errorCode" in d), "")
            except (ValueError, KeyError, TypeError, AttributeError):
                pass
            raise DeliveryError("FCM " + answer_error(r, "error.message") + (f" ({code})" if code else ""),
                                expired=code in _GONE)


class ApnsSender(HttpSender):
    http2 = True

    def cleartext_h2(self) -> bool:
        return self._base().startswith("http://")  # a local HTTP/2 server without TLS (tests)

    def _base(self) -> str:
        return endpoint("apns-sandbox" if self.options.get("sandbox") else "apns")

    def _jwt(self) -> str:
        try:
            return jwt.encode({"iss": self.credentials.get("teamId", ""), "iat": int(time.time())},
                              self.credentials.get("authKey", ""), algorithm="ES256",
                              headers={"kid": self.credentials.get("authKeyId", "")})
        except Exception as exc:
            raise DeliveryError(f"APNs: the auth key cannot sign: {exc}") from exc

    def send(self, identifier: str, data: dict) -> None:
        alert = {k: data[k] for k in ("title", "body") if data.get(k)}
        aps: dict = {}
        if alert:
            aps["alert"] = alert
        for key, name in (("badge", "badge"), ("sound", "sound"), ("tag", "thread-id"), ("action", "category")):
            if data.get(key) not in (None, "", -1):
                aps[name] = data[key]
        if data.get("contentAvailable"):
            aps["content-available"] = 1
        if data.get("critical"):
            aps["sound"] = {"critical": 1, "name": data.get("sound") or "default", "volume": 1.0}
        payload = {"aps": aps, **(data.get("data") or {})}
        headers = {"authorization": f"bearer {self._jwt()}", "apns-topic": self.credentials.get("bundleId", ""),
                   "apns-push-type": "alert" if alert else "background",
                   "apns-priority": "10" if data.get("priority", "high") == "high" and alert else "5"}
        r = self.post(f"{self._base()}/3/device/{identifier}", json=payload, headers=headers)
        if r.status_code != 200:
            reason = ""
            try:
                reason = r.json().get("reason", "")
            except (ValueError, AttributeError):
                pass
            raise DeliveryError("APNs " + answer_error(r, "reason"), expired=r.status_code == 410 or reason in _GONE)


SENDERS = {"fcm": FcmSender, "apns": ApnsSender}
