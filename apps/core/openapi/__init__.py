"""The OpenAPI 3.1 document of the /v1 API (``GET /v1/openapi.json``): :func:`document`."""

from apps.core.openapi.document import document

__all__ = ["document"]
