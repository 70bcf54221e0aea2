"""The Locale service's data, built from maintained packages (no hand-kept tables):

* country and language names, currencies, locale names: the Unicode CLDR through Babel;
* the list of countries (ISO 3166-1) and of ISO 639-1 languages: pycountry;
* country -> continent: pycountry-convert-ng;
* EU member states: python-stdnum's list of EU VAT member states (less its ``xi``, Northern
  Ireland, which is a VAT prefix and not a country);
* calling codes: phonenumbers (Google's libphonenumber metadata).

Every list is built once per process and locale, and cached as the encoded JSON body.
"""

from __future__ import annotations

from functools import cache, lru_cache

import orjson
from babel import Locale, UnknownLocaleError, numbers
from babel.core import get_global

from apps.core.domain.geo import country_name, unknown_name
from apps.core.domain.mail import locale_identifiers

# Appwrite's seven continent codes -> the CLDR region that names each (UN M49 / CLDR codes).
CONTINENT_REGIONS = {"AF": "002", "AN": "AQ", "AS": "142", "EU": "150", "NA": "003", "OC": "009", "SA": "005"}


@lru_cache(maxsize=256)
def parse_locale(value: str) -> str | None:
    """The Babel identifier of a request's locale (``pt-br`` / ``pt_BR`` -> ``pt_BR``), or
    ``None`` when CLDR does not know it (Appwrite then keeps its default)."""
    value = value.strip().replace("-", "_")
    if not value or len(value) > 32:
        return None
    try:
        return str(Locale.parse(value))
    except (UnknownLocaleError, ValueError, TypeError):
        return None


@cache
def countries() -> tuple[str, ...]:
    """ISO 3166-1 alpha-2 codes of every country (pycountry)."""
    import pycountry

    return tuple(sorted(c.alpha_2 for c in pycountry.countries))


@cache
def eu_countries() -> frozenset[str]:
    """EU member states (ISO alpha-2)."""
    from stdnum.eu import vat

    iso = {code.upper() for code in vat.MEMBER_STATES if code != "xi"}
    return frozenset(iso & set(countries()))


def continent_of(code: str) -> str | None:
    """Appwrite's continent code (AF, AN, AS, EU, NA, OC, SA) of a country, or ``None``."""
    import pycountry_convert

    try:
        return pycountry_convert.country_alpha2_to_continent_code(code)
    except KeyError:
        return None


def continent_name(code: str, locale: str) -> str:
    region = CONTINENT_REGIONS.get(code)
    return Locale.parse(locale).territories.get(region, "") if region else unknown_name(locale)


def currency_of(code: str) -> str:
    """The currency (ISO 4217) a country uses today, ``""`` when unknown."""
    found = numbers.get_territory_currencies(code, tender=True) if code in countries() else []
    return found[0] if found else ""


def _sorted_by_name(items: list[dict]) -> list[dict]:
    return sorted(items, key=lambda item: item["name"])


def _body(key: str, items: list[dict]) -> bytes:
    return orjson.dumps({"total": len(items), key: items})


@lru_cache(maxsize=64)
def countries_body(locale: str) -> bytes:
    items = [{"name": country_name(c, locale), "code": c} for c in countries()]
    return _body("countries", _sorted_by_name(items))


@lru_cache(maxsize=64)
def eu_body(locale: str) -> bytes:
    items = [{"name": country_name(c, locale), "code": c} for c in eu_countries()]
    return _body("countries", _sorted_by_name(items))


@lru_cache(maxsize=64)
def phones_body(locale: str) -> bytes:
    """Calling codes, ascending by code (then country name), as Appwrite orders them."""
    import phonenumbers

    known = set(countries())
    items = []
    for calling_code, regions in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.items():
        for region in regions:
            if region in known:
                items.append((calling_code, country_name(region, locale), region))
    items.sort()
    return _body("phones", [{"code": f"+{c}", "countryCode": r, "countryName": n} for c, n, r in items])


@lru_cache(maxsize=64)
def continents_body(locale: str) -> bytes:
    import pycountry_convert

    codes = set(pycountry_convert.convert_country_alpha2_to_continent_code.COUNTRY_ALPHA2_TO_CONTINENT_CODE.values())
    items = [{"name": continent_name(c, locale), "code": c} for c in sorted(codes)]
    return _body("continents", _sorted_by_name(items))


@cache
def _currency_codes() -> tuple[str, ...]:
    """Currencies legal tender somewhere today (CLDR territory currencies with no end date)."""
    used = set()
    for code in countries():
        used.update(numbers.get_territory_currencies(code, tender=True))
    return tuple(sorted(used))


def _native_symbol(currency: str) -> str:
    """The symbol in the language of the first country that uses ``currency`` (CLDR likely
    subtags: ``und_JP`` -> ``ja_JP``)."""
    for country in countries():
        if currency in numbers.get_territory_currencies(country, tender=True):
            try:
                return numbers.get_currency_symbol(currency, locale=Locale.parse(f"und_{country}"))
            except (UnknownLocaleError, ValueError):
                break
    return numbers.get_currency_symbol(currency, locale="en")


@lru_cache(maxsize=64)
def currencies_body(locale: str) -> bytes:
    fractions = get_global("currency_fractions")
    items = []
    for code in _currency_codes():
        digits, rounding, *_ = fractions.get(code, fractions["DEFAULT"])
        items.append({
            "symbol": numbers.get_currency_symbol(code, locale=locale),
            "name": numbers.get_currency_name(code, locale=locale),
            "symbolNative": _native_symbol(code),
            "decimalDigits": digits,
            "rounding": rounding,
            "code": code,
            "namePlural": numbers.get_currency_name(code, count=2, locale=locale),
        })
    return _body("currencies", items)


@lru_cache(maxsize=64)
def languages_body(locale: str) -> bytes:
    """ISO 639-1 languages: name in ``locale``, native name where CLDR has the language."""
    import pycountry

    names = Locale.parse(locale).languages
    items = []
    for lang in pycountry.languages:
        code = getattr(lang, "alpha_2", None)
        if not code:
            continue
        try:
            native = Locale.parse(code).get_display_name(code) or lang.name
        except (UnknownLocaleError, ValueError):
            native = lang.name
        items.append({"name": names.get(code, lang.name), "code": code, "nativeName": native})
    items.sort(key=lambda item: item["code"])
    return _body("languages", items)


@lru_cache(maxsize=64)
def codes_body(locale: str) -> bytes:
    """Locale codes (``en``, ``en-us``, ``pt-br``...): the CLDR locales made of an ISO 639-1
    language and optionally a country, named in ``locale``."""
    items = [{"code": ident.replace("_", "-").lower(), "name": Locale.parse(ident).get_display_name(locale)}
             for ident in locale_identifiers()]
    return _body("localeCodes", items)
