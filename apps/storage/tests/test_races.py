"""Uploads racing a bucket delete: the file row can vanish between insert and finish."""

from __future__ import annotations

import types

import pytest


def test_finish_without_a_file_row_drops_the_bytes_and_is_404(django_db_setup, django_db_blocker, tmp_path):
    """finish() on a row deleted meanwhile (bucket deleted during the upload) raised TypeError
    (500) and left the stored bytes behind."""
    from apps.core.drivers.db import DjangoSync
    from apps.core.drivers.runtime import SYNC, run_sync
    from apps.core.errors import AppwriteError
    from apps.storage import backends
    from apps.storage.services.files import finish

    src = tmp_path / "upload.bin"
    src.write_bytes(b"orphan")
    key = backends.store(backends.new_key("p", "b"), str(src))
    assert backends.read_head(key, 10) == b"orphan"
    with django_db_blocker.unblock():
        db = DjangoSync()
        missing = run_sync(db.fetchval("SELECT COALESCE(MAX(id), 0) + 1000 FROM storage_file"))
        ctx = types.SimpleNamespace(db=db, mode=SYNC)
        with pytest.raises(AppwriteError) as err:
            run_sync(finish(ctx, {"id": 0, "uid": "b"}, missing, key=key, size=6, signature="", mime_type="text/plain"))
    assert err.value.type == "storage_file_not_found"
    assert not backends.files_storage().exists(key)


def test_previews_render_at_most_preview_concurrency_at_once():
    """Concurrent previews of one 40-Mpx PNG (~130 KB) grew an ASGI process to ~2 GB; renders
    are now gated per process."""
    import asyncio
    import threading
    import time

    from apps.core.drivers.runtime import ASYNC
    from apps.storage.api import content

    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def render(i):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return i

    async def main():
        content._render_gate.clear()  # a fresh semaphore for this test's loop
        return await asyncio.gather(*(content.render_limited(ASYNC, render, i) for i in range(8)))

    assert asyncio.run(main()) == list(range(8))
    assert state["peak"] == content.PREVIEW_CONCURRENCY
    content._render_gate.clear()


@pytest.fixture(params=["asgi", "wsgi"])
def race_api(request, project):
    from conftest import Api

    return Api(request.getfixturevalue(f"{request.param}_server"), project)


@pytest.mark.slow
def test_bucket_and_file_updates_racing_their_delete(race_api):
    """An update racing a delete of the same bucket or file answered 500 (the row it re-read
    or updated was gone); a second delete of a file answered 204 and removed its bytes again."""
    from apps.core.tests.racing import check, fire
    from apps.storage.tests.conftest import make_bucket, upload

    for _ in range(6):
        bucket = make_bucket(race_api)
        path = f"/storage/buckets/{bucket['$id']}"
        r = upload(race_api, bucket["$id"], b"hello")
        assert r.status_code == 201, r.text
        file_path = f"{path}/files/{r.json()['$id']}"
        put = ("PUT", file_path, {"name": "renamed.txt"})
        check(fire(race_api, [put, put, ("DELETE", file_path, None), ("DELETE", file_path, None)]),
              {200: None, 204: None, 404: {"storage_file_not_found"}})
        put = ("PUT", path, {"name": "renamed"})
        answers = fire(race_api, [put, put, ("DELETE", path, None), ("DELETE", path, None)])
        check(answers, {200: None, 204: None, 404: {"storage_bucket_not_found"}})
        assert sum(r.status_code == 204 for r in answers) == 1
