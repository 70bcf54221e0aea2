"""Core routes: ping and the OpenAPI document (the Health service lives in ``apps.health``)."""

from apps.core import api
from apps.core.http.endpoint import Endpoint

endpoints = [
    Endpoint("GET", "/ping", api.ping, "ping.get", scope="global"),
    Endpoint("GET", "/openapi.json", api.openapi, "openapi.get", scope=None),
]
