"""Uploads racing a bucket delete: the file row can vanish between insert and finish."""

from __future__ import annotations

import types

import pytest


def test_finish_without_a_file_row_drops_the_bytes_and_is_404(django_db_setup, django_db_blocker, tmp_path):
    """finish() on a row deleted meanwhile (bucket deleted during the upload) raised TypeError
    (500) and left the stored bytes behind."""
    from apps.core.db import DjangoSync
    from apps.core.errors import AppwriteError
    from apps.core.runtime import SYNC, run_sync
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
