"""Pure parts of the functions app: cron schedules, event matching, dynamic keys, headers,
archive checks, the realtime families of executions."""

from __future__ import annotations

import datetime as dt
import os
import tempfile

import pytest

from apps.core.errors import AppwriteError
from apps.functions.cron import next_after, parse

T0 = dt.datetime(2026, 12, 6, 5, 41, 30, tzinfo=dt.UTC)

CRON_CASES = [
    ("* * * * *", dt.datetime(2026, 12, 6, 5, 42, tzinfo=dt.UTC)),
    ("*/15 * * * *", dt.datetime(2026, 12, 6, 5, 45, tzinfo=dt.UTC)),
    ("0 0 * * 0", dt.datetime(2026, 12, 13, 0, 0, tzinfo=dt.UTC)),  # Sunday
    ("30 2 1 * *", dt.datetime(2027, 1, 1, 2, 30, tzinfo=dt.UTC)),
    ("0 12 * * 1-5", dt.datetime(2026, 12, 7, 12, 0, tzinfo=dt.UTC)),
    ("0 0 1 * 1", dt.datetime(2026, 12, 7, 0, 0, tzinfo=dt.UTC)),  # either day field (Vixie cron)
    ("5,10 6 * * 7", dt.datetime(2026, 12, 6, 6, 5, tzinfo=dt.UTC)),  # 7 is Sunday too
]


@pytest.mark.parametrize("expr,expected", CRON_CASES, ids=[c[0] for c in CRON_CASES])
def test_cron_next(expr, expected):
    assert next_after(expr, T0) == expected


@pytest.mark.parametrize("expr", ["", "* * * *", "61 * * * *", "* 24 * * *", "*/0 * * * *", "a b c d e",
                                  "5-1 * * * *"])
def test_cron_invalid(expr):
    with pytest.raises(ValueError):
        parse(expr)


def test_cron_never():
    with pytest.raises(ValueError):
        next_after("0 0 31 2 *", T0)


def test_event_matching():
    from apps.core.domain.events import WriteEvent
    from apps.functions.triggers import event_names, matches

    row = WriteEvent(project_id="p", resource="row", action="create",
                     ids={"databaseId": "db", "tableId": "t", "rowId": "r"}, payload={})
    names = event_names(row)
    assert names[0] == "databases.db.tables.t.rows.r.create"
    assert matches("databases.*.tables.*.rows.*.create", names)
    assert matches("databases.db.tables.t.rows.*", names)
    assert matches("databases.*.collections.*.documents.*.create", names)  # the legacy names too
    assert not matches("databases.*.tables.*.rows.*.delete", names)
    assert not matches("buckets.*.files.*.create", names)
    execution = WriteEvent(project_id="p", resource="execution", action="update",
                           ids={"functionId": "f", "executionId": "e"}, payload={})
    assert matches("functions.*.executions.*.update", event_names(execution))


def test_execution_realtime_channels():
    from apps.core.domain.channels import family_names

    ((name, channels, events),) = family_names("execution", "create",
                                               (("executionId", "e1"), ("functionId", "f1")), None)
    assert name == "executions" and set(channels) == {"executions", "executions.e1", "functions.f1"}
    assert events[0] == "functions.f1.executions.e1.create"


def test_dynamic_keys(settings):
    from apps.functions.keys import make_key, read_key

    key = make_key(project_uid="p1", function_uid="f", execution_uid="e", scopes=["users.read"], duration=60)
    assert key.startswith("dynamic_")
    assert read_key(key, project_uid="p1")["scopes"] == ["users.read"]
    assert read_key(key, project_uid="p2") is None  # another project
    assert read_key(key[:-2] + "xx", project_uid="p1") is None  # tampered
    expired = make_key(project_uid="p1", function_uid="f", execution_uid="e", scopes=[], duration=-1)
    assert read_key(expired, project_uid="p1") is None


def test_an_engine_that_does_not_answer_is_a_503(settings, tmp_path):
    """FUNCTIONS_EXECUTOR=docker with a socket nothing listens on (the compose file's default
    mount on a host without Docker): executions answer 503, never 500, and no executor is kept."""
    from apps.functions import executor
    from apps.functions.executions import executor_or_503

    settings.FUNCTIONS_EXECUTOR = "docker"
    settings.FUNCTIONS_DOCKER_HOST = f"unix://{tmp_path}/docker.sock"
    with pytest.raises(AppwriteError) as err:
        executor_or_503()
    assert err.value.status == 503 and err.value.type == "function_executor_unavailable"
    assert "does not answer" in err.value.message and str(tmp_path) not in err.value.message
    assert executor._executor is None


def test_clean_headers():
    from apps.functions.executions import clean_headers

    out = clean_headers({"X-Test": 1, "X-Appwrite-Key": "secret", "Cookie": "a=b", "x-appwrite-trigger": "event"})
    assert out == {"x-test": "1"}
    with pytest.raises(AppwriteError):
        clean_headers({"x": {"nested": True}})


def test_parse_schedule():
    from apps.functions.executions import parse_schedule

    soon = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)
    assert parse_schedule(soon.isoformat()) == soon
    for bad in ("2000-01-01T00:00:00Z", "tomorrow", (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10)).isoformat()):
        with pytest.raises(AppwriteError) as err:
            parse_schedule(bad)
        assert err.value.type == "general_argument_invalid"


def test_check_archive_symlink_escape():
    import io
    import tarfile

    from apps.functions.code import check_archive

    fd, path = tempfile.mkstemp(suffix=".tar.gz")
    os.close(fd)
    try:
        with tarfile.open(path, "w:gz") as tar:
            link = tarfile.TarInfo("passwd")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(link)
            tar.addfile(tarfile.TarInfo("ok.txt"), io.BytesIO(b""))
        with pytest.raises(AppwriteError) as err:
            check_archive(path)
        assert err.value.type == "storage_invalid_file" and "link" in err.value.message
    finally:
        os.unlink(path)
