"""The spec probe (``tests/tools/spec_coverage.py``): it reads the 1.9.5 operation list, matches
the route table against it and prints the served count; the count only grows."""

from __future__ import annotations

import re

from tests.tools import spec_coverage as probe


def test_the_reference_is_the_whole_1_9_server_api():
    ops = probe.reference()
    assert len(ops) == 551 and len({probe.normalise(m, p) for m, p, _ in ops}) == 551
    assert ("POST", "/graphql", "graphql") in ops and ("GET", "/avatars/screenshots", "avatars") in ops


def test_it_prints_the_served_count(capsys):
    assert probe.main(["--missing"]) == 0
    out = capsys.readouterr().out
    found = re.match(r"served (\d+) of 551 operations", out)
    assert found, out[:300]
    served = int(found.group(1))
    assert served >= 291  # the count when the probe was written; it may only grow
    assert "  graphql          2 / 2" in out and "  avatars          8 / 8" in out
    missing = out[out.index("missing ("):].splitlines()[1:]
    assert len(missing) == 551 - served


def test_path_parameter_names_do_not_matter():
    served = {probe.normalise("GET", "/storage/buckets/{id}")}
    assert probe.normalise("get", "/storage/buckets/{bucketId}") in served


def test_a_running_server_gives_the_same_count(asgi_server, capsys):
    probe.main([])
    offline = capsys.readouterr().out.splitlines()[0]
    assert probe.main(["--url", asgi_server.endpoint]) == 0
    assert capsys.readouterr().out.splitlines()[0] == offline
