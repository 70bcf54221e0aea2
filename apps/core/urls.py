"""Core routes: ping, health and the OpenAPI document (contract §12)."""

from apps.core import api
from apps.core.http.endpoint import Endpoint

endpoints = [
    Endpoint("GET", "/ping", api.ping, "ping.get", scope="global"),
    Endpoint("GET", "/health/version", api.health_version, "health.getVersion", scope=None),
    Endpoint("GET", "/health", api.health, "health.get", scope="health.read"),
    Endpoint("GET", "/health/db", api.health_db, "health.getDB", scope="health.read"),
    Endpoint("GET", "/health/cache", api.health_cache, "health.getCache", scope="health.read"),
    Endpoint("GET", "/openapi.json", api.openapi, "openapi.get", scope=None),
]
