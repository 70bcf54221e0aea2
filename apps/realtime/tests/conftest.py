"""Fixtures for realtime tests: a dedicated live ASGI server; the websocket client is tests.ws_client."""

from __future__ import annotations

import pytest

from conftest import Api, start_server
from tests.ws_client import connect, nothing, recv, recv_type, subscribe, ws_url  # noqa: F401  (re-exported)


@pytest.fixture(scope="module")
def rt_env(live_env) -> dict[str, str]:
    """Server environment: the connection limit is off (tests open many sockets from one IP)."""
    return {**live_env, "REALTIME_CONNECTIONS_PER_MINUTE": "0", "REALTIME_AUTH_TTL": "1"}


@pytest.fixture(scope="module")
def rt_server(rt_env):
    server = start_server("asgi", rt_env)
    yield server
    server.stop()


@pytest.fixture
def rt_api(rt_server, project) -> Api:
    return Api(rt_server, project)
