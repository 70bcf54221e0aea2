"""The query-string decoder of the /v1 pipeline (apps/core/http/params.py): the same pairs as
the stdlib's ``parse_qsl`` for every input, and the same refusals."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.core.errors import AppwriteError
from apps.core.http.params import parse_query

# Bytes a query string is made of, weighted towards what makes decoding hard.
_PIECES = st.sampled_from([b"%", b"%2", b"%41", b"%e2%82%ac", b"%E2%82", b"%zz", b"%ff", b"+", b"&", b"=",
                           b"\\", b"\\x41", b"a", b"[0]", b"\xc3\xa9", b"%5C", b"%25", b"%00", b"\\N{DASH}"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=24))
def test_pairs_match_the_stdlib(pieces):
    raw = b"".join(pieces)
    expected = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=2000)
    assert parse_query(raw) == expected


@pytest.mark.parametrize("raw", [
    "",
    "a=1&b=&c&&=x",
    "queries%5B0%5D=" + quote(json.dumps({"method": "equal", "attribute": "title", "values": ["a b+c&d=é€"]})),
    "name=%E2%82%AC%20and%2Bplus+space",
    "bad=%zz%41&end=%",
])
def test_examples_match_the_stdlib(raw):
    assert parse_query(raw.encode()) == parse_qsl(raw, keep_blank_values=True)


def test_undecodable_bytes_and_too_many_parameters_are_400():
    with pytest.raises(AppwriteError) as caught:
        parse_query(b"a=\xff")
    assert (caught.value.status, caught.value.type) == (400, "general_bad_request")
    assert len(parse_query(b"&".join([b"a=1"] * 2000))) == 2000
    with pytest.raises(AppwriteError) as caught:
        parse_query(b"&".join([b"a=1"] * 2001))
    assert caught.value.status == 400
