"""The Locale service over HTTP: the caller's country from its IP (a real MaxMind-DB file), the
lists and their translation, and bad input."""

from __future__ import annotations

import pytest

from conftest import Api

CASES = [
    # (id, path, headers, status, type)
    ("get", "/locale", {}, 200, None),
    ("codes", "/locale/codes", {}, 200, None),
    ("countries", "/locale/countries", {}, 200, None),
    ("eu", "/locale/countries/eu", {}, 200, None),
    ("phones", "/locale/countries/phones", {}, 200, None),
    ("continents", "/locale/continents", {}, 200, None),
    ("currencies", "/locale/currencies", {}, 200, None),
    ("languages", "/locale/languages", {}, 200, None),
    ("unknown locale is ignored", "/locale/countries?locale=xx-nowhere", {}, 200, None),
    ("undeclared param ignored", "/locale/countries?color=red", {}, 200, None),
    ("locale too long", "/locale/countries?locale=" + "a" * 65, {}, 400, "general_argument_invalid"),
    ("no project", "/locale", {"X-Appwrite-Project": ""}, 400, "project_id_missing"),
    ("unknown project", "/locale", {"X-Appwrite-Project": "nope"}, 404, "project_not_found"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_routes(api: Api, case):
    _, path, headers, status, etype = case
    r = api.call("GET", path, headers=headers)  # as a guest: locale.read is a guest scope
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    else:
        body = r.json()
        if path != "/locale" and "?" not in path:
            key = [k for k in body if k != "total"][0]
            assert body["total"] == len(body[key]) > 0


def test_lists_have_appwrite_shapes(api: Api):
    countries = api.call("GET", "/locale/countries").json()
    assert countries["total"] == 249
    names = [c["name"] for c in countries["countries"]]
    assert names == sorted(names) and {"name": "Germany", "code": "DE"} in countries["countries"]
    eu = {c["code"] for c in api.call("GET", "/locale/countries/eu").json()["countries"]}
    assert len(eu) == 27 and {"DE", "FR", "GR", "IE"} <= eu and "GB" not in eu and "CH" not in eu
    phones = api.call("GET", "/locale/countries/phones").json()["phones"]
    assert {"code": "+49", "countryCode": "DE", "countryName": "Germany"} in phones
    assert [int(p["code"][1:]) for p in phones] == sorted(int(p["code"][1:]) for p in phones)
    continents = api.call("GET", "/locale/continents").json()["continents"]
    assert sorted(c["code"] for c in continents) == ["AF", "AN", "AS", "EU", "NA", "OC", "SA"]
    assert {"name": "North America", "code": "NA"} in continents
    currencies = {c["code"]: c for c in api.call("GET", "/locale/currencies").json()["currencies"]}
    assert currencies["USD"] == {"symbol": "$", "name": "US Dollar", "symbolNative": "$", "decimalDigits": 2,
                                 "rounding": 0, "code": "USD", "namePlural": "US dollars"}
    assert currencies["JPY"]["decimalDigits"] == 0 and currencies["JPY"]["symbolNative"] == "￥"
    languages = {x["code"]: x for x in api.call("GET", "/locale/languages").json()["languages"]}
    assert languages["de"] == {"name": "German", "code": "de", "nativeName": "Deutsch"}
    codes = {x["code"]: x["name"] for x in api.call("GET", "/locale/codes").json()["localeCodes"]}
    assert codes["pt-br"] == "Portuguese (Brazil)" and codes["en"] == "English"


def test_names_follow_the_locale_header_and_param(api: Api):
    de = api.call("GET", "/locale/countries", headers={"X-Appwrite-Locale": "de"}).json()["countries"]
    assert {"name": "Deutschland", "code": "DE"} in de
    fr = api.call("GET", "/locale/continents?locale=fr", headers={"X-Appwrite-Locale": "de"}).json()
    assert {"name": "Amérique du Nord", "code": "NA"} in fr["continents"]  # the parameter wins
    pt = api.call("GET", "/locale/countries/eu", headers={"X-Appwrite-Locale": "pt-br"}).json()["countries"]
    assert {"name": "Alemanha", "code": "DE"} in pt
    unknown = api.call("GET", "/locale/countries", headers={"X-Appwrite-Locale": "zz-nowhere"}).json()
    assert {"name": "Germany", "code": "DE"} in unknown["countries"]


def test_get_without_a_database_is_unknown(api: Api):
    body = api.call("GET", "/locale").json()
    assert body == {"ip": "127.0.0.1", "countryCode": "--", "country": "Unknown", "continentCode": "--",
                    "continent": "Unknown", "eu": False, "currency": ""}


@pytest.mark.parametrize("ip, expected", [
    ("198.51.100.7", {"countryCode": "DE", "country": "Germany", "continentCode": "EU", "continent": "Europe",
                      "eu": True, "currency": "EUR"}),
    ("203.0.113.9", {"countryCode": "US", "country": "United States", "continentCode": "NA",
                     "continent": "North America", "eu": False, "currency": "USD"}),
    ("2001:db8::1", {"countryCode": "FR", "country": "France", "continentCode": "EU", "continent": "Europe",
                     "eu": True, "currency": "EUR"}),
    ("192.0.2.1", {"countryCode": "--", "country": "Unknown", "continentCode": "--", "continent": "Unknown",
                   "eu": False, "currency": ""}),
])
def test_get_from_the_geoip_database(svc_server, project, ip, expected):
    api = Api(svc_server, project)
    body = api.call("GET", "/locale", headers={"X-Forwarded-For": ip}).json()
    assert body == {"ip": ip, **expected}


def test_get_is_translated(svc_api):
    body = svc_api.call("GET", "/locale", headers={"X-Forwarded-For": "198.51.100.7", "X-Appwrite-Locale": "de"}).json()
    assert body["country"] == "Deutschland" and body["continent"] == "Europa"
    unknown = svc_api.call("GET", "/locale", headers={"X-Forwarded-For": "192.0.2.1", "X-Appwrite-Locale": "de"}).json()
    assert unknown["country"] == "Unbekannte Region"
