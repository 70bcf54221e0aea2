"""Streamed pieces go to ``send`` as memoryviews only under uvicorn (apps/core/http/serving/lean_asgi.py
``note_server``): the decision follows the server that drives the lifespan, not a setting."""

from __future__ import annotations

import asyncio

import pytest
import uvicorn
from uvicorn.lifespan.on import LifespanOn

from apps.core.http.serving import lean_asgi


@pytest.fixture
def reset(monkeypatch):
    monkeypatch.setattr(lean_asgi, "SEND_BUFFERS", False)


def test_uvicorn_lifespan_turns_buffers_on(reset):
    """uvicorn's own lifespan driver runs the project's application (backend.asgi)."""
    from backend.asgi import application

    config = uvicorn.Config(application, lifespan="on", log_level="warning")
    config.load()

    async def cycle():
        lifespan = LifespanOn(config)
        await lifespan.startup()
        started = lean_asgi.SEND_BUFFERS
        await lifespan.shutdown()
        assert not lifespan.error_occurred
        return started

    assert asyncio.run(cycle()) is True


def test_another_servers_lifespan_keeps_bytes(reset, monkeypatch):
    """daphne through backend.serve_daphne (its own lifespan driver), granian, or any other
    server: pieces are converted to bytes, as the ASGI spec's ``body`` asks."""
    from backend.asgi import application
    from backend.serve_daphne import Lifespan

    monkeypatch.setattr(lean_asgi, "SEND_BUFFERS", True)  # as if a uvicorn had run before

    async def cycle():
        lifespan = Lifespan(application)
        await lifespan.startup()
        started = lean_asgi.SEND_BUFFERS
        await lifespan.shutdown()
        return started

    assert asyncio.run(cycle()) is False

