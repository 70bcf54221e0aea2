"""A local server that answers like Apple's APNs provider API, for tests: HTTP/2 without TLS
(prior knowledge, as ``httpx2`` speaks to an ``http://`` APNs endpoint), ``POST
/3/device/<token>`` with a provider token (ES256 JWT, ``kid`` and ``iss`` checked against the
test's key) and ``apns-topic``; Apple's error answers ``{"reason": ...}`` (403
``InvalidProviderToken``, 400 ``BadDeviceToken``/``TopicDisallowed``, 410 ``Unregistered``)."""

from __future__ import annotations

import json
import socket
import threading

import jwt

from apps.messaging.tests.fake_providers import Keys, Received

APNS_TEAM, APNS_KEY_ID, APNS_TOPIC = "TEAM123456", "KEY1234567", "com.example.app"


class ApnsServer:
    """HTTP/2 (prior knowledge) ``POST /3/device/<token>``, Apple's provider-token checks."""

    def __init__(self, keys: Keys, received: Received):
        self.keys, self.received = keys, received
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _answer(self, headers: dict, body: bytes) -> tuple[int, dict]:
        try:
            claims = jwt.decode(headers.get("authorization", "").removeprefix("bearer "), self.keys.ec_public,
                                algorithms=["ES256"], options={"verify_aud": False})
            kid = jwt.get_unverified_header(headers["authorization"][7:]).get("kid")
        except (jwt.PyJWTError, KeyError):
            return 403, {"reason": "InvalidProviderToken"}
        if claims.get("iss") != APNS_TEAM or kid != APNS_KEY_ID:
            return 403, {"reason": "InvalidProviderToken"}
        if headers.get("apns-topic") != APNS_TOPIC:
            return 400, {"reason": "TopicDisallowed"}
        token = headers.get(":path", "").removeprefix("/3/device/")
        if token == "gone-token":
            return 410, {"reason": "Unregistered", "timestamp": 1700000000000}
        if not token or token == "bad-token":
            return 400, {"reason": "BadDeviceToken"}
        payload = json.loads(body or b"{}")
        self.received.add("apns", token, ((payload.get("aps") or {}).get("alert") or {}).get("title", ""))
        return 200, {}

    def _serve(self, conn: socket.socket) -> None:
        import h2.config
        import h2.connection
        import h2.events

        h2c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        h2c.initiate_connection()
        conn.sendall(h2c.data_to_send())
        streams: dict[int, tuple[dict, bytearray]] = {}
        with conn:
            while True:
                try:
                    data = conn.recv(65535)
                except OSError:
                    return
                if not data:
                    return
                for event in h2c.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = (dict(event.headers), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        h2c.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        status, answer = self._answer(headers, bytes(body))
                        payload = json.dumps(answer).encode() if answer else b""
                        h2c.send_headers(event.stream_id, [(":status", str(status)), ("apns-id", "00000000-0000-0000-0000-000000000001"),
                                                           ("content-length", str(len(payload)))], end_stream=not payload)
                        if payload:
                            h2c.send_data(event.stream_id, payload, end_stream=True)
                conn.sendall(h2c.data_to_send())

    def stop(self) -> None:
        self.running = False
        self.sock.close()
