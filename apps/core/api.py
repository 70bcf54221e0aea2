"""Ping and the OpenAPI document."""

from __future__ import annotations

from apps.core.http.context import json_response, text_response


async def ping(ctx):
    return text_response("Pong!")


async def openapi(ctx):
    from apps.core.openapi import document

    return json_response(document())
