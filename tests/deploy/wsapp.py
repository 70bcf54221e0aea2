"""A tiny ASGI websocket app for the load-balancer test (realtime itself comes in a later issue).

On connect it accepts and sends the request headers it received as JSON, then echoes text
messages until the client closes.
"""

import json


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    if scope["type"] != "websocket":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    await send({"type": "websocket.send", "text": json.dumps({"path": scope["path"], "headers": headers})})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        await send({"type": "websocket.send", "text": message.get("text") or ""})
