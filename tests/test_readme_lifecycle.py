"""The Account lifecycle page's examples (docs/account-lifecycle.md), run as written (in order,
one namespace) against a live server, the worker process and a real SMTP server;
``link_from_mail``/``code_from_mail`` read the mailbox, as the page says a user's mail client
would."""

from __future__ import annotations

from appwrite.client import Client

from conftest import Api, make_project
from tests import docs
from tests.mail import code_in, link_in


def test_lifecycle_examples_run(asgi_server, mail_worker, smtp_server, django_db_setup, django_db_blocker, capsys):
    project = make_project(django_db_blocker, origins=("http://localhost:5173",))
    api = Api(asgi_server, project)
    assert api.call("POST", "/account", json={"userId": "unique()", "email": "ada@example.com",
                                              "password": "correct horse"}).status_code == 201
    seen: dict[str, int] = {}

    def next_mail(email: str):
        seen[email] = seen.get(email, 0) + 1
        return smtp_server.wait_for(to=email, count=seen[email])[-1]

    namespace = {
        "ENDPOINT": asgi_server.endpoint,
        "server": Client().set_endpoint(asgi_server.endpoint).set_project(project.id).set_key(project.key),
        "link_from_mail": lambda email: link_in(next_mail(email)),
        "code_from_mail": lambda email: code_in(next_mail(email)),
    }
    blocks = docs.lifecycle_blocks()
    assert len(blocks) == 5
    for block in blocks:
        exec(block.replace('"demo"', repr(project.id)), namespace)  # noqa: S102 (the page's own code)
    printed = capsys.readouterr().out.split()
    assert printed[0] == "True" and "['email']" in " ".join(printed) and printed[-1] == "ada@example.com"
