"""Load tests: k6 scenarios, the ASGI-vs-WSGI comparison runner and its results (not product code)."""
