"""The Locale routes: scope ``locale.read`` (guests, users and keys hold it)."""

from typing import Any

from apps.core.http.endpoint import Endpoint
from apps.locale import api

_S: dict[str, Any] = {"scope": "locale.read", "input": api.LocaleParams}

endpoints = [
    Endpoint("GET", "/locale", api.locale_get, "locale.get", response="locale", **_S),
    Endpoint("GET", "/locale/codes", api.locale_codes, "locale.listCodes", response="localeCodeList", **_S),
    Endpoint("GET", "/locale/countries", api.countries, "locale.listCountries", response="countryList", **_S),
    Endpoint("GET", "/locale/countries/eu", api.countries_eu, "locale.listCountriesEU", response="countryList", **_S),
    Endpoint("GET", "/locale/countries/phones", api.countries_phones, "locale.listCountriesPhones",
             response="phoneList", **_S),
    Endpoint("GET", "/locale/continents", api.continents, "locale.listContinents", response="continentList", **_S),
    Endpoint("GET", "/locale/currencies", api.currencies, "locale.listCurrencies", response="currencyList", **_S),
    Endpoint("GET", "/locale/languages", api.languages, "locale.listLanguages", response="languageList", **_S),
]
