"""Buckets, files and upload chunks.

The /v1 hot path reads and writes these tables with plain SQL (``apps.core.drivers.db``); the models own
the schema, the migrations and the admin. File bytes never live in the database: ``File.key`` is
the server-generated name of the object on the storage backend (``apps.storage.backends``).
"""

from __future__ import annotations

from django.db import models

from apps.projects.models import Project


class Bucket(models.Model):
    """A bucket of a project. ``maximum_file_size`` is in bytes; ``allowed_file_extensions`` is a
    JSON list of lower-case extensions without the dot (empty = all)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="buckets")
    uid = models.CharField("bucket ID", max_length=36)
    name = models.CharField(max_length=128)
    permissions = models.JSONField(default=list, blank=True)
    file_security = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)
    maximum_file_size = models.BigIntegerField()
    allowed_file_extensions = models.JSONField(default=list, blank=True)
    compression = models.CharField(max_length=8, default="none")
    encryption = models.BooleanField(default=True)
    antivirus = models.BooleanField(default=True)
    transformations = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "storage_bucket"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="bucket_unique_uid")]

    def __str__(self) -> str:
        return self.uid


class File(models.Model):
    """A file of a bucket. ``status`` is ``pending`` (chunks still arriving), ``assembling``
    (one request holds the claim to store its bytes) or ``ready`` (visible to list and download).

    ``key`` is written before any byte is stored under it, so every stored object is named by a
    row. ``lease_owner``/``lease_expires`` name the writer of an ``assembling`` file and when its
    claim lapses (``apps.storage.leases``): a file whose writer died is resumed, replaced or
    cleaned up instead of staying stuck.

    ``read_roles`` is ``|role|role|`` of the roles granted ``read`` (an indexed-form copy of
    ``permissions`` for filtered listing). Sizes are bytes.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    bucket = models.ForeignKey(Bucket, on_delete=models.CASCADE, related_name="files")
    uid = models.CharField("file ID", max_length=36)
    name = models.CharField(max_length=255)
    folder = models.CharField(max_length=255, blank=True, default="")
    permissions = models.JSONField(default=list, blank=True)
    read_roles = models.TextField(blank=True, default="")
    key = models.CharField("storage key", max_length=255)
    signature = models.CharField(max_length=32, blank=True, default="")
    mime_type = models.CharField(max_length=255, blank=True, default="")
    size_original = models.BigIntegerField(default=0)
    size_actual = models.BigIntegerField(default=0)
    chunks_total = models.IntegerField(default=1)
    chunks_uploaded = models.IntegerField(default=0)
    status = models.CharField(max_length=12, default="pending")
    lease_owner = models.CharField(max_length=200, blank=True, default="", db_default="")
    lease_expires = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "storage_file"
        constraints = [models.UniqueConstraint(fields=["bucket", "uid"], name="file_unique_uid")]
        indexes = [
            models.Index(fields=["bucket", "status", "created_at"], name="file_bucket_status_idx"),
            models.Index(fields=["status", "updated_at"], name="file_status_updated_idx"),
        ]

    def __str__(self) -> str:
        return self.uid


class Chunk(models.Model):
    """One received chunk of a chunked upload (0-based ``idx``); the row makes the count of
    received chunks atomic under concurrent, out-of-order arrival."""

    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="chunks")
    idx = models.IntegerField()
    size = models.BigIntegerField()

    class Meta:
        db_table = "storage_chunk"
        constraints = [models.UniqueConstraint(fields=["file", "idx"], name="chunk_unique_idx")]

    def __str__(self) -> str:
        return f"{self.file_id}:{self.idx}"


class FileToken(models.Model):
    """A token granting read access to one file (Appwrite's resource tokens, type ``files``).

    No secret is stored: the secret handed to clients is a JWT signed with a key derived from
    ``SECRET_KEY`` and naming this row (``apps.storage.filetokens``); deleting the row revokes it.
    ``expire`` ``None`` = never; ``accessed_at`` is refreshed at most once a day.

    The cascades below are Django's, which only the ORM runs; every plain-SQL delete of a file
    (files API, bucket purge task, stale-upload cleanup) deletes the file's tokens itself in the
    same transaction, or the foreign key refuses it.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    uid = models.CharField("token ID", max_length=36)
    bucket = models.ForeignKey(Bucket, on_delete=models.CASCADE, related_name="+")
    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="tokens")
    expire = models.DateTimeField(null=True, blank=True)
    accessed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "storage_file_token"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="file_token_unique_uid")]

    def __str__(self) -> str:
        return self.uid
