"""Every Avatars operation through the official SDKs: Python 27 on the three builds, web 27
under Node (which builds image URLs that the script then loads)."""

from __future__ import annotations

import io
import json

import pytest
import requests
from appwrite.client import Client
from appwrite.enums.browser import Browser
from appwrite.enums.credit_card import CreditCard
from appwrite.enums.flag import Flag
from appwrite.exception import AppwriteException
from appwrite.services.avatars import Avatars
from PIL import Image

from apps.avatars import icons
from apps.avatars.tests.test_api import png_bytes
from tests.websdk import run_node


def size_of(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


def test_python_sdk(svc_server, project, origin):
    origin.routes["/a.png"] = (200, {"Content-Type": "image/png"}, png_bytes((90, 90)))
    origin.routes["/page"] = (200, {"Content-Type": "text/html"}, b'<link rel="icon" href="/a.png" sizes="90x90">')
    client = Client().set_endpoint(svc_server.endpoint).set_project(project.id)
    avatars = Avatars(client)
    assert size_of(avatars.get_browser(Browser.GOOGLE_CHROME, width=50, height=50)) == (50, 50)
    assert size_of(avatars.get_credit_card(CreditCard.VISA)) == (100, 100)
    assert size_of(avatars.get_flag(Flag.GERMANY, width=40, height=30)) == (40, 30)
    assert size_of(avatars.get_initials(name="Ada Lovelace", width=64, height=64)) == (64, 64)
    assert size_of(avatars.get_qr("https://example.com", size=128)) == (128, 128)
    assert size_of(avatars.get_image(origin.url + "/a.png", width=30, height=30)) == (30, 30)
    assert size_of(avatars.get_favicon(origin.url + "/page")) == (56, 56)
    with pytest.raises(AppwriteException) as err:
        avatars.get_credit_card(CreditCard.RUPAY)
    assert err.value.code == 404 and err.value.type == "avatar_not_found"


@pytest.mark.parametrize("enum, kind", [(Browser, "browsers"), (CreditCard, "credit-cards"), (Flag, "flags")])
def test_every_sdk_code_is_accepted(svc_asgi, project, enum, kind):
    """Each value of the SDK's enum answers an image, or 404 avatar_not_found for the few codes
    the installed icon sets have no image for (never 400)."""
    missing = []
    for member in enum:
        r = requests.get(f"{svc_asgi.endpoint}/avatars/{kind}/{member.value}?width=8&height=8",
                         headers={"X-Appwrite-Project": project.id}, timeout=30)
        if r.status_code == 404:
            assert r.json()["type"] == "avatar_not_found"
            missing.append(member.value)
        else:
            assert r.status_code == 200, (member, r.text)
    expected = sorted(c for c in icons.codes(kind) if icons.icon_path(kind, c) is None and c in {m.value for m in enum})
    assert sorted(missing) == expected


def test_initials_of_the_session_user(svc_server, project):
    from conftest import Api

    api = Api(svc_server, project)
    _, token = api.signup(name="Grace Hopper")
    client = Client().set_endpoint(svc_server.endpoint).set_project(project.id).set_session(token)
    mine = Avatars(client).get_initials(width=32, height=32)
    named = Avatars(Client().set_endpoint(svc_server.endpoint).set_project(project.id)).get_initials(
        name="Grace Hopper", width=32, height=32)
    assert mine == named


def test_web_sdk(svc_asgi, project, origin):
    origin.routes["/a.png"] = (200, {"Content-Type": "image/png"}, png_bytes((90, 90)))
    origin.routes["/page"] = (200, {"Content-Type": "text/html"}, b'<link rel="icon" href="/a.png" sizes="90x90">')
    proc = run_node("avatars.mjs", svc_asgi.endpoint, project.id, origin.url)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    for name in ("browser", "creditCard", "flag", "initials", "qr", "image", "favicon"):
        assert seen[name]["status"] == 200, (name, seen[name])
        assert seen[name]["type"] == "image/png" and seen[name]["bytes"] > 50
    assert seen["qrDownload"] == 'attachment; filename="qr.png"'
