"""How requests reach the /v1 pipeline: ASGI/WSGI adapters, the /v1 HTTP protocol, server hooks, Django middleware."""
