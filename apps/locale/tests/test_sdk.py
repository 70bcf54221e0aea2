"""Every Locale operation through the official SDKs: Python 27 on the three builds, web 27 under
Node."""

from __future__ import annotations

import json

from appwrite.client import Client
from appwrite.services.locale import Locale

from tests.websdk import run_node


def test_python_sdk(svc_server, project):
    client = Client().set_endpoint(svc_server.endpoint).set_project(project.id).set_locale("de")
    locale = Locale(client)
    got = locale.get()
    assert got.countrycode == "--" and got.country == "Unbekannte Region" and got.currency == ""
    assert locale.list_codes().total > 100
    countries = locale.list_countries()
    assert any(c.code == "DE" and c.name == "Deutschland" for c in countries.countries)
    assert locale.list_countries_eu().total == 27
    assert any(p.code == "+49" and p.countrycode == "DE" for p in locale.list_countries_phones().phones)
    assert locale.list_continents().total == 7
    assert any(c.code == "EUR" and c.decimaldigits == 2 for c in locale.list_currencies().currencies)
    assert any(x.code == "de" and x.nativename == "Deutsch" for x in locale.list_languages().languages)


def test_web_sdk(svc_asgi, project):
    proc = run_node("locale.mjs", svc_asgi.endpoint, project.id)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["get"]["countryCode"] == "--" and seen["get"]["ip"] == "127.0.0.1"
    assert seen["countries"] == 249 and seen["eu"] == 27 and seen["continents"] == 7
    assert seen["de"] == "Deutschland" and seen["phone"] == "+49"
    assert seen["currencies"] > 100 and seen["languages"] > 100 and seen["codes"] > 100
