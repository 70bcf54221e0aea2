"""The realtime outbox: events of committed writes not yet on the Redis event stream."""

from __future__ import annotations

from django.db import models


class OutboxEvent(models.Model):
    """One published message waiting for the Redis stream (``apps.realtime.outbox``).

    Written in the write's own transaction (or right after a write without one, when Redis
    could not take the event at once); deleted once Redis accepted it. ``project`` is the
    public project ID (the stream entry's ``p`` field), ``message`` the JSON of the published
    message (``delivery.build_message`` plus its event ``id``), ``created_at`` when the write
    recorded it, ``stream`` the Redis stream key it is for (``hub.stream_key()``: deployments
    that share a database but not a Redis, or a ``REDIS_PREFIX``, each relay only their own).
    Relayed in ``id`` order."""

    id = models.BigAutoField(primary_key=True)
    stream = models.CharField(max_length=200)
    project = models.CharField(max_length=64)
    message = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "realtime_outbox"
        indexes = [models.Index(fields=["stream", "id"], name="realtime_outbox_stream_idx")]

    def __str__(self) -> str:
        return f"outbox event {self.id} of {self.project}"
