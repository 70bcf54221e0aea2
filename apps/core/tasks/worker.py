"""The background worker: runs queued Django tasks with retries, back-off and crash recovery.

It is django-tasks-db's worker loop (claim the next ready task with ``SELECT ... FOR UPDATE SKIP
LOCKED``, run it, record the outcome) with four additions:

* **Retries with back-off.** A task that raises runs again after ``TASKS_RETRY_DELAY`` seconds,
  doubled per attempt up to ``TASKS_RETRY_MAX_DELAY``, until it has run ``TASKS_MAX_ATTEMPTS``
  times; the last error (class and traceback) is kept on the row meanwhile. After the last attempt
  the task is ``FAILED`` and stays in the table (counted by ``/health/queue/failed/...``).
  Attempts are the framework's own count: one worker ID per claim (``TaskResult.attempts``).
* **Crash recovery.** Every worker records a heartbeat (:class:`apps.core.models.TaskWorker`)
  every ``TASKS_HEARTBEAT`` seconds from a side thread. A task still ``RUNNING`` under a worker
  whose heartbeat is older than ``TASKS_WORKER_TIMEOUT`` (killed, machine lost) is made ready
  again, or failed if that was its last attempt. So a task is run at least once: tasks must be
  idempotent (a mail may, rarely, arrive twice; a delete finds less to delete).
* **Graceful stop.** SIGTERM/SIGINT let the running task finish, then the worker exits and removes
  its heartbeat (a second signal stops at once; the task is then recovered as above).
* **Periodic jobs.** Apps register maintenance with :func:`every_heartbeat` (in ``AppConfig.ready``);
  every worker runs each job at its start and on each heartbeat, after the lost tasks are
  recovered (e.g. the functions app fails executions whose process died and deletes deployments
  past their retention).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker as DbWorker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction

from apps.core.models import TaskWorker

log = logging.getLogger("apps.worker")

_periodic: list[Callable[[], object]] = []


def every_heartbeat(job: Callable[[], object]) -> None:
    """Have every worker run ``job()`` at its start and on each heartbeat (``TASKS_HEARTBEAT``
    seconds, on the heartbeat thread): maintenance that must happen even when nothing is
    queued. Several workers run it at once, so it must be idempotent, and quick. Registering the
    same job again does nothing."""
    if job not in _periodic:
        _periodic.append(job)


def run_periodic_jobs() -> None:
    """Run every registered job once; a job's error is logged, the others still run."""
    for job in list(_periodic):
        try:
            job()
        except Exception:
            log.exception("periodic job %s failed", getattr(job, "__qualname__", job))


def retry_delay(attempts: int) -> float:
    """Seconds before attempt ``attempts + 1`` of a task that failed ``attempts`` times (>= 1)."""
    return float(min(settings.TASKS_RETRY_DELAY * 2 ** (attempts - 1), settings.TASKS_RETRY_MAX_DELAY))


def _record_error(row: DBTaskResult[Any, Any], exc: BaseException) -> None:
    from traceback import format_exception

    row.exception_class_path = f"{type(exc).__module__}.{type(exc).__qualname__}"
    row.traceback = "".join(format_exception(exc))[-20000:]


class Worker(DbWorker):
    """One worker process (or the in-process worker thread of the embedded default)."""

    def __init__(self, *, queue_names: list[str], worker_id: str, interval: float | None = None,
                 batch: bool = False, max_tasks: int | None = None, install_signals: bool = True):
        super().__init__(queue_names=queue_names, interval=settings.TASKS_POLL_INTERVAL if interval is None else interval,
                         batch=batch, backend_name="default", startup_delay=False, max_tasks=max_tasks,
                         worker_id=worker_id, excluded_queue_names=[])
        self.install_signals = install_signals
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Run until stopped: register, start the heartbeat thread, process tasks; on the way
        out (a stop, a signal, an error) remove the heartbeat."""
        TaskWorker.objects.update_or_create(
            worker_id=self.worker_id,
            defaults={"host": socket.gethostname()[:255], "pid": os.getpid(), "seen_at": timezone.now()},
        )
        recover_lost_tasks()
        run_periodic_jobs()
        log.info("worker pid=%d id=%s ready (queues: %s)", os.getpid(), self.worker_id, ",".join(self.queue_names))
        self._beat = threading.Thread(target=self._heartbeat, name="worker-heartbeat", daemon=True)
        self._beat.start()
        if self.install_signals:
            self.configure_signals()
        try:
            self.run()
        finally:
            self.stop()
            try:
                TaskWorker.objects.filter(worker_id=self.worker_id).delete()
            except Exception:  # the database may be gone; the heartbeat then just expires
                log.warning("worker %s: could not remove its heartbeat", self.worker_id)

    def stop(self) -> None:
        """Ask the loop to end after the running task (any thread; idempotent)."""
        self.running = False
        self._stop.set()

    def shutdown(self, signum: int, frame: Any) -> None:
        """First SIGTERM/SIGINT: finish the running task, then exit; a second one: exit now (the
        interrupted task is queued again at once)."""
        if not self.running:
            log.warning("worker %s: second signal, stopping now", self.worker_id)
            self.reset_signals()
            raise SystemExit(1)
        log.info("worker %s: signal %s, stopping after the running task", self.worker_id, signum)
        self.running = False
        if not self.running_task:
            raise SystemExit(0)

    def _heartbeat(self) -> None:
        every = settings.TASKS_HEARTBEAT
        while not self._stop.wait(every):
            try:
                TaskWorker.objects.update_or_create(
                    worker_id=self.worker_id,
                    defaults={"host": socket.gethostname()[:255], "pid": os.getpid(), "seen_at": timezone.now()},
                )
                recover_lost_tasks()
                run_periodic_jobs()
            except Exception:
                log.exception("worker %s: heartbeat failed", self.worker_id)
            finally:
                close_old_connections()
        connection.close()

    # --- one task ----------------------------------------------------------------------------
    def run_task(self, db_task_result: DBTaskResult[Any, Any]) -> None:
        """Run one claimed task; on an error schedule the next attempt or record the failure."""
        self.running_task = True
        started = time.monotonic()
        try:
            task = db_task_result.task
            result = db_task_result.task_result
            if task.takes_context:
                from django.tasks.base import TaskContext

                task.call(TaskContext(task_result=result), *result.args, **result.kwargs)
            else:
                task.call(*result.args, **result.kwargs)
            # A finished task's row is removed, not kept as a result: its arguments may carry a
            # secret (a mail's link or code), and nothing reads results. Failed rows stay.
            DBTaskResult.objects.filter(id=db_task_result.id).delete()
            log.info("task %s %s done in %.2fs (attempt %d)", db_task_result.task_name, db_task_result.id,
                     time.monotonic() - started, len(db_task_result.worker_ids))
        except (KeyboardInterrupt, SystemExit) as exc:  # stopped mid-task: run it again soon
            _record_error(db_task_result, exc)
            db_task_result.status = "READY"
            db_task_result.run_after = timezone.now()
            db_task_result.save(update_fields=["status", "run_after", "exception_class_path", "traceback"])
            raise
        except Exception as exc:
            self._failed(db_task_result, exc)
        finally:
            self.running_task = False
            self._run_tasks += 1

    def _failed(self, row: DBTaskResult[Any, Any], exc: BaseException) -> None:
        attempts = len(row.worker_ids)
        if attempts < settings.TASKS_MAX_ATTEMPTS:
            delay = retry_delay(attempts)
            _record_error(row, exc)
            row.status = "READY"
            row.run_after = timezone.now() + timedelta(seconds=delay)
            row.save(update_fields=["status", "run_after", "exception_class_path", "traceback"])
            log.warning("task %s %s failed (attempt %d of %d: %s: %s); next try in %.0fs", row.task_name, row.id,
                        attempts, settings.TASKS_MAX_ATTEMPTS, type(exc).__name__, exc, delay)
        else:
            row.set_failed(exc)
            log.error("task %s %s failed for good after %d attempts: %s: %s", row.task_name, row.id, attempts,
                      type(exc).__name__, exc)


def recover_lost_tasks() -> int:
    """Make tasks left ``RUNNING`` by dead workers (no heartbeat for ``TASKS_WORKER_TIMEOUT``
    seconds) ready to run again, or failed when that was their last attempt; forget the dead
    workers. Safe to run from several workers at once. Returns how many tasks were recovered."""
    cutoff = timezone.now() - timedelta(seconds=settings.TASKS_WORKER_TIMEOUT)
    alive = set(TaskWorker.objects.filter(seen_at__gte=cutoff).values_list("worker_id", flat=True))
    recovered = 0
    with exclusive_transaction(DBTaskResult.objects.db):
        for row in DBTaskResult.objects.running().select_for_update(skip_locked=True):
            owner = row.worker_ids[-1] if row.worker_ids else ""
            if owner in alive:
                continue
            recovered += 1
            error = RuntimeError(f"worker {owner} stopped while running this task (attempt {len(row.worker_ids)})")
            if len(row.worker_ids) >= settings.TASKS_MAX_ATTEMPTS:
                row.set_failed(error)
                log.error("task %s %s lost with its worker %s; no attempts left", row.task_name, row.id, owner)
            else:
                _record_error(row, error)
                row.status = "READY"
                row.run_after = timezone.now()
                row.save(update_fields=["status", "run_after", "exception_class_path", "traceback"])
                log.warning("task %s %s lost with its worker %s; queued again", row.task_name, row.id, owner)
        TaskWorker.objects.filter(seen_at__lt=cutoff).delete()
    return recovered


class InProcessWorker:
    """A :class:`Worker` on a thread of this process (``TASKS_IN_PROCESS_WORKER``: the embedded
    quick start, where no separate worker runs)."""

    def __init__(self) -> None:
        self.worker = Worker(queue_names=["*"], worker_id=f"inproc-{socket.gethostname()[:20]}-{os.getpid()}",
                             install_signals=False)
        self.thread = threading.Thread(target=self._run, name="in-process-worker", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.start()
        except Exception:
            log.exception("in-process worker stopped")
        finally:
            connection.close()

    def stop(self, timeout: float = 10.0) -> None:
        """End the worker after its running task; waits at most ``timeout`` seconds."""
        self.worker.stop()
        self.thread.join(timeout)


def in_process_worker() -> InProcessWorker:
    """Start a worker thread inside this process; ``stop()`` ends it."""
    return InProcessWorker()
