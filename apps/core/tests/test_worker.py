"""The task queue and its worker as real processes: mail through a real SMTP server, retries
with back-off, failures recorded, a worker killed mid-task, restarts losing nothing."""

from __future__ import annotations

import time

import pytest

from conftest import free_port
from tests.mail import html_of, start_smtp_server, start_worker, text_of, wait_until


@pytest.fixture(autouse=True)
def orm(django_db_setup, django_db_blocker):
    """ORM access to the live servers' test database, autocommitted (no test transaction)."""
    with django_db_blocker.unblock():
        yield


def _rows(task_path: str):
    from django_tasks_db.models import DBTaskResult

    return list(DBTaskResult.objects.filter(task_path=task_path).order_by("enqueued_at"))



def _worker_env(live_env, **extra) -> dict[str, str]:
    return {**live_env, "TASKS_RETRY_DELAY": "0.5", "TASKS_POLL_INTERVAL": "0.1", "TASKS_HEARTBEAT": "0.5",
            "TASKS_WORKER_TIMEOUT": "2", **{k: str(v) for k, v in extra.items()}}


def test_enqueue_writes_the_backends_row_shape():
    """The request-path enqueue writes exactly the columns of django-tasks-db's model."""
    from django_tasks_db.models import DBTaskResult

    from apps.core.tasks.queue import COLUMNS

    assert set(COLUMNS) == {f.column for f in DBTaskResult._meta.concrete_fields}


def test_request_path_enqueue_is_read_by_the_framework(live_env):
    from django.tasks import default_task_backend

    from apps.core.drivers.db import get_database
    from apps.core.drivers.runtime import run_sync
    from apps.core.tasks.queue import enqueue
    from apps.core.tests.sample_tasks import slow_marker

    # The sync driver is Django's own connection (the test database), as the WSGI build uses it.
    result_id = run_sync(enqueue(get_database("sync"), slow_marker.using(priority=5), path="/nonexistent",
                                 seconds=0))
    result = default_task_backend.get_result(result_id)
    assert result.status == "READY" and result.kwargs == {"path": "/nonexistent", "seconds": 0}
    assert result.task.priority == 5 and result.task.queue_name == "default" and result.attempts == 0
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(id=result_id).delete()


def test_mail_through_smtp_in_two_languages(mail_worker, smtp_server):
    from apps.core.domain.mail import send_templated_mail

    ctx = {"project": "Notes & Co", "user": "Ada", "url": "http://localhost:5173/verify?userId=u1&secret=s3"}
    send_templated_mail.enqueue(name="verification", recipient="infra-en@example.com", locale="en-GB", context=ctx)
    send_templated_mail.enqueue(name="verification", recipient="infra-de@example.com", locale="de", context=ctx,
                                recipient_name="Ada L.")
    (en,) = smtp_server.wait_for(to="infra-en@example.com")
    (de,) = smtp_server.wait_for(to="infra-de@example.com")
    assert en["Subject"] == "Account Verification for Notes & Co"
    assert de["Subject"] == "Bestätigung Ihres Kontos bei Notes & Co"
    assert "Ada L." in str(de["To"]) and "noreply@localhost" in str(en["From"])
    assert ctx["url"] in text_of(en) and "Notes & Co" in text_of(en)
    assert 'href="http://localhost:5173/verify?userId=u1&amp;secret=s3"' in html_of(en)  # escaped in HTML
    assert "Notes &amp; Co" in html_of(en)
    wait_until(lambda: not _rows("apps.core.domain.mail.send_templated_mail"), what="sent mails' rows removed")


def test_unknown_locale_falls_back_to_english():
    from apps.core.domain.mail import mail_language, render_mail

    assert mail_language("recovery", "de-AT") == "de"
    assert mail_language("recovery", "DE") == "de"
    for locale in ("xx", "", "../../etc", "pt-br"):
        assert mail_language("recovery", locale) == "en"
    subject, text, html = render_mail("email-code", locale="zz", context={"project": "P", "otp": "123456"})
    assert subject == "OTP for P Login" and "123456" in text and "123456" in html


@pytest.mark.parametrize("fault", ["down", "refuses"])
def test_smtp_failure_retries_then_fails_and_is_counted(live_env, tmp_path, fault):
    """A mail server that is down (nothing listens) or refuses every recipient: the task is tried
    TASKS_MAX_ATTEMPTS times with back-off, then recorded as failed and counted."""
    from apps.core.domain.mail import send_templated_mail
    from apps.core.tasks.queue import failed_count

    if fault == "down":
        smtp = None
        port = free_port()  # nothing listens there
    else:
        smtp = start_smtp_server(tmp_path / "refusing", refuse=True)
        port = smtp.port
    env = _worker_env(live_env, SMTP_HOST="127.0.0.1", SMTP_PORT=port, TASKS_MAX_ATTEMPTS=3, SMTP_TIMEOUT=3)
    task = send_templated_mail.using(queue_name="default")
    result = task.enqueue(name="recovery", recipient=f"{fault}@example.com", locale="en",
                          context={"project": "P", "url": "http://x/"})
    from types import SimpleNamespace

    from django.tasks import default_task_backend

    from apps.core.drivers.db import get_database
    from apps.core.drivers.runtime import run_sync

    ctx = SimpleNamespace(db=get_database("sync"))  # what the health functions read: ctx.db
    before = run_sync(failed_count(ctx, "default"))
    worker = start_worker(env, tmp_path / "worker.log", "--queues", "default")
    try:
        final = wait_until(lambda: (r := default_task_backend.get_result(result.id)).status == "FAILED" and r,
                      timeout=60, what="the task to fail")
    finally:
        worker.stop()
        if smtp:
            smtp.stop()
    assert final.attempts == 3
    assert final.errors and ("SMTP" in final.errors[0].exception_class_path
                             or "Connection" in final.errors[0].exception_class_path), final.errors
    log = (tmp_path / "worker.log").read_text()
    assert log.count("next try in") == 2 and "failed for good after 3 attempts" in log
    assert run_sync(failed_count(ctx, "default")) == before + 1


def test_nothing_is_lost_while_no_worker_runs(live_env, tmp_path):
    """Tasks enqueued while the worker is stopped run when it starts again."""
    from apps.core.tests.sample_tasks import slow_marker

    marks = [tmp_path / f"m{i}" for i in range(3)]
    for m in marks:
        slow_marker.enqueue(path=str(m), seconds=0)
    worker = start_worker(_worker_env(live_env), tmp_path / "worker.log", "--queues", "default")
    try:
        wait_until(lambda: all(m.exists() and m.read_text() == "start\ndone\n" for m in marks), what="all tasks run")
    finally:
        assert worker.stop() == 0  # a graceful stop exits 0


@pytest.mark.faults
def test_worker_killed_mid_task_is_recovered(live_env, tmp_path):
    """SIGKILL while a task runs: the next worker sees the dead worker's stale heartbeat, queues
    the task again and runs it to the end; nothing is left behind."""
    from apps.core.tests.sample_tasks import slow_marker

    mark = tmp_path / "mark"
    result = slow_marker.enqueue(path=str(mark), seconds=3)
    env = _worker_env(live_env)
    first = start_worker(env, tmp_path / "first.log", "--queues", "default", "--worker-id", "doomed-worker")
    wait_until(lambda: mark.exists() and mark.read_text() == "start\n", what="the task to start")
    first.kill()
    second = start_worker(env, tmp_path / "second.log", "--queues", "default")
    try:
        wait_until(lambda: mark.read_text() == "start\nstart\ndone\n", timeout=40, what="the task to run again")
        wait_until(lambda: not _rows("apps.core.tests.sample_tasks.slow_marker"), what="the row removed")
    finally:
        second.stop()
    assert "lost with its worker doomed-worker; queued again" in (tmp_path / "second.log").read_text()
    from apps.core.models import TaskWorker

    assert not TaskWorker.objects.filter(worker_id="doomed-worker").exists()  # the dead worker is forgotten
    del result


def test_sigterm_lets_the_running_task_finish(live_env, tmp_path):
    from apps.core.tests.sample_tasks import slow_marker

    mark = tmp_path / "mark"
    slow_marker.enqueue(path=str(mark), seconds=2)
    worker = start_worker(_worker_env(live_env), tmp_path / "w.log", "--queues", "default")
    wait_until(lambda: mark.exists(), what="the task to start")
    assert worker.stop() == 0
    assert mark.read_text() == "start\ndone\n"
    assert not _rows("apps.core.tests.sample_tasks.slow_marker")
    from apps.core.models import TaskWorker

    assert not TaskWorker.objects.filter(pid=worker.proc.pid).exists()


def test_a_failing_task_is_retried_with_back_off(live_env, tmp_path):
    from django.tasks import default_task_backend

    from apps.core.tests.sample_tasks import always_fails

    log = tmp_path / "tries"
    result = always_fails.enqueue(path=str(log))
    worker = start_worker(_worker_env(live_env, TASKS_MAX_ATTEMPTS=3, TASKS_RETRY_DELAY=1),
                          tmp_path / "w.log", "--queues", "default")
    started = time.monotonic()
    try:
        final = wait_until(lambda: (r := default_task_backend.get_result(result.id)).status == "FAILED" and r,
                      timeout=30, what="the task to fail")
    finally:
        worker.stop()
    assert time.monotonic() - started >= 3  # waited 1 s, then 2 s between the tries
    assert log.read_text() == "try\ntry\ntry\n" and final.attempts == 3
    assert final.errors[0].exception_class_path == "builtins.ValueError"
    assert "this task always fails" in final.errors[0].traceback


def test_worker_command_refuses_bad_arguments(live_env):
    import subprocess
    import sys

    from conftest import ROOT

    for args, message in ((["--queues", "nope"], "unknown queue"), (["--max-tasks", "0"], "at least 1")):
        out = subprocess.run([sys.executable, "manage.py", "worker", *args], cwd=ROOT, env=live_env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and message in out.stderr, out.stderr


def test_health_queue_stats_counts_waiting_and_failed():
    from django_tasks_db.models import DBTaskResult

    from apps.core.tasks.queue import health_queue_stats
    from apps.databases.tasks import purge_tables

    size, failed = health_queue_stats("deletes")
    waiting = purge_tables.enqueue(table_ids=[-1])  # no worker takes "deletes" in the test session
    broken = purge_tables.enqueue(table_ids=[-2])
    DBTaskResult.objects.filter(id=broken.id).update(status="FAILED")
    try:
        assert health_queue_stats("deletes") == (size + 1, failed + 1)
        assert health_queue_stats("audits") == (0, 0)
    finally:
        DBTaskResult.objects.filter(id__in=[waiting.id, broken.id]).delete()
