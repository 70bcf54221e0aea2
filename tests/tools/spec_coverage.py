"""How much of Appwrite's 1.9 server API this server serves.

The reference is ``tests/data/appwrite-1.9.5-server-operations.txt``: the 551 operations (method,
path, SDK service) of Appwrite's server API 1.9.5 as the official Node.js server SDK 26.2.0 calls
them (its header names the source). An operation is served when this server has a route with
that method and path (path parameter names aside). By default the routes are read from the route
table (``V1_ROUTER``); ``--url`` reads ``/v1/openapi.json`` of a running server instead.

    .venv/bin/python -m tests.tools.spec_coverage                 # totals per service
    .venv/bin/python -m tests.tools.spec_coverage --missing       # and each missing operation
    .venv/bin/python -m tests.tools.spec_coverage --url http://127.0.0.1:8000/v1

Prints ``served <n> of <total> operations`` first; exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request
from collections import Counter
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "appwrite-1.9.5-server-operations.txt"
_PARAM = re.compile(r"\{[^}]*\}")


def normalise(method: str, path: str) -> tuple[str, str]:
    """``(METHOD, path)`` with every path parameter written ``{}``."""
    return method.upper(), _PARAM.sub("{}", path)


def reference() -> list[tuple[str, str, str]]:
    """``[(method, path, service)]`` of the reference file."""
    out = []
    for line in REFERENCE.read_text().splitlines():
        if line and not line.startswith("#"):
            method, path, service = line.split()
            out.append((method, path, service))
    return out


def served_from_router() -> set[tuple[str, str]]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
    import django

    django.setup()
    from apps.core.http.routes import v1_router

    return {normalise(ep.method, path) for ep in v1_router().endpoints for path in (ep.path, *ep.aliases)}


def served_from_url(url: str) -> set[tuple[str, str]]:
    with urllib.request.urlopen(url.rstrip("/") + "/openapi.json", timeout=30) as answer:  # noqa: S310
        doc = json.load(answer)
    return {normalise(method, path.removeprefix("/v1")) for path, ops in doc["paths"].items() for method in ops}


def report(served: set[tuple[str, str]], missing: bool = False) -> str:
    ops = reference()
    total, hit = Counter(), Counter()
    lacking = []
    for method, path, service in ops:
        total[service] += 1
        if normalise(method, path) in served:
            hit[service] += 1
        else:
            lacking.append(f"  {service:13} {method:6} {path}")
    n = sum(hit.values())
    lines = [f"served {n} of {len(ops)} operations of Appwrite's server API 1.9.5 "
             f"({100 * n / len(ops):.1f}%; reference: {REFERENCE.name})", "", "service        served / total"]
    lines += [f"  {s:13} {hit[s]:4} / {total[s]}" for s in sorted(total)]
    known = {normalise(m, p) for m, p, _ in ops}
    extra = sorted(served - known)
    lines += ["", f"{len(extra)} routes here are not in the 1.9.5 server API (legacy paths, client-only or "
                  "this server's own: /openapi.json ...)"]
    if missing:
        lines += ["", f"missing ({len(lacking)}):", *lacking]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true", help="list every operation not served")
    parser.add_argument("--url", help="a running server's /v1 endpoint (default: the route table)")
    args = parser.parse_args(argv)
    served = served_from_url(args.url) if args.url else served_from_router()
    print(report(served, args.missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
