"""The /v1 route table, reached through the ``V1_ROUTER`` setting.

Core never imports the edge (``backend/``): as Django finds the URLconf through
``ROOT_URLCONF``, the pipeline, the OpenAPI document and the abuse checks find the
:class:`~apps.core.http.endpoint.Router` through the dotted path in ``V1_ROUTER``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from apps.core.http.endpoint import Router


@cache
def v1_router() -> Router:
    """The :class:`~apps.core.http.endpoint.Router` named by ``V1_ROUTER`` (imported once)."""
    router: Router = import_string(settings.V1_ROUTER)
    return router
