"""Locale endpoints: the caller's country from its IP, and the localised lists.

Names follow the request's locale: the ``locale`` parameter, else ``X-Appwrite-Locale``, else
``LOCALE_DEFAULT``; an unknown locale is ignored, as Appwrite does.
"""

from __future__ import annotations

from typing import Annotated

from django.conf import settings
from pydantic import StringConstraints

from apps.core.domain.geo import country_of
from apps.core.http.context import Response, json_response
from apps.core.http.inputs import Strict
from apps.locale import data


class LocaleParams(Strict):
    """Every Locale route takes only the optional ``locale`` (others are ignored, as Appwrite does)."""

    locale: Annotated[str, StringConstraints(max_length=64)] = ""


def request_locale(ctx) -> str:
    """The Babel identifier the response is written in (see the module docstring)."""
    for candidate in ((ctx.params.locale if ctx.params else ""), ctx.headers.get("x-appwrite-locale", "")):
        found = data.parse_locale(candidate) if candidate else None
        if found:
            return found
    return data.parse_locale(settings.LOCALE_DEFAULT) or "en"


async def locale_get(ctx):
    """``{ip, countryCode, country, continentCode, continent, eu, currency}`` of the caller's IP;
    unknown countries are ``"--"``/``"Unknown"`` with ``eu`` false and ``currency`` ``""``."""
    locale = request_locale(ctx)
    ip = ctx.client_ip or ctx.peer_ip
    code, name = country_of(ip, locale)
    continent = data.continent_of(code) if code != "--" else None
    return json_response({
        "ip": ip,
        "countryCode": code,
        "country": name,
        "continentCode": continent or "--",
        "continent": data.continent_name(continent, locale) if continent else name,
        "eu": code in data.eu_countries(),
        "currency": data.currency_of(code) if code != "--" else "",
    })


def _list(builder):
    async def handler(ctx):
        return Response(body=builder(request_locale(ctx)))

    handler.__name__ = builder.__name__.replace("_body", "_list")
    return handler


locale_codes = _list(data.codes_body)
countries = _list(data.countries_body)
countries_eu = _list(data.eu_body)
countries_phones = _list(data.phones_body)
continents = _list(data.continents_body)
currencies = _list(data.currencies_body)
languages = _list(data.languages_body)
