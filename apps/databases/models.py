"""Databases, tables (collections), columns (attributes), indexes and rows (documents).

Django owns this fixed schema; the /v1 hot path reads and writes it with plain SQL
(``apps.core.drivers.db``). User data lives in ONE rows table keyed by ``(table, row id)``: the user
columns in ``data`` (``jsonb`` on PostgreSQL), ``$sequence`` = the bigserial primary key, and the
read roles in ``read_roles`` (``text[]`` with a GIN index on PostgreSQL, a JSON array on SQLite)
so a permission-filtered list is an index lookup. User indexes are expression indexes on
``data`` created at runtime (``apps.databases.services.ddl``).
"""

from __future__ import annotations

from django.db import models

from apps.projects.models import Project


class RolesField(models.Field):
    """A list of role strings: ``text[]`` on PostgreSQL, JSON text elsewhere."""

    description = "list of role strings"

    def db_type(self, connection):
        return "text[]" if connection.vendor == "postgresql" else "text"


class Database(models.Model):
    """A database; ``type`` is ``tablesdb`` or ``legacy`` (the API that created it)."""

    project = models.ForeignKey(Project, on_delete=models.DB_CASCADE, related_name="databases")
    uid = models.CharField("database ID", max_length=36)
    name = models.CharField(max_length=128)
    description = models.TextField(blank=True, default="")
    enabled = models.BooleanField(default=True)
    type = models.CharField(max_length=16, default="tablesdb")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "databases_database"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="database_unique_uid")]

    def __str__(self) -> str:
        return self.uid


class Table(models.Model):
    """A table (legacy: collection). ``permissions`` are container permissions;
    ``row_security`` is ``rowSecurity`` / ``documentSecurity``."""

    database = models.ForeignKey(Database, on_delete=models.DB_CASCADE, related_name="tables")
    uid = models.CharField("table ID", max_length=36)
    name = models.CharField(max_length=128)
    description = models.TextField(blank=True, default="")
    enabled = models.BooleanField(default=True)
    row_security = models.BooleanField(default=False)
    permissions = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "databases_table"
        constraints = [models.UniqueConstraint(fields=["database", "uid"], name="table_unique_uid")]

    def __str__(self) -> str:
        return self.uid


class Column(models.Model):
    """A typed column (legacy: attribute). ``kind`` is the create route's kind (``varchar``,
    ``float``, ``email``...); ``spec`` holds ``min``, ``max``, ``default``, ``elements``,
    ``encrypt`` as applicable."""

    table = models.ForeignKey(Table, on_delete=models.DB_CASCADE, related_name="columns")
    key = models.CharField(max_length=36)
    kind = models.CharField(max_length=16)
    required = models.BooleanField(default=False)
    array = models.BooleanField(default=False)
    size = models.BigIntegerField(null=True, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "databases_column"
        constraints = [models.UniqueConstraint(fields=["table", "key"], name="column_unique_key")]

    def __str__(self) -> str:
        return self.key


class Index(models.Model):
    """A user index: ``type`` key/unique/fulltext over ``columns`` with ``orders``. Backed by a
    real SQL index named ``udx_<table pk>_<index pk>``."""

    table = models.ForeignKey(Table, on_delete=models.DB_CASCADE, related_name="indexes")
    key = models.CharField(max_length=36)
    type = models.CharField(max_length=16)
    columns = models.JSONField(default=list)
    orders = models.JSONField(default=list, blank=True)
    lengths = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "databases_index"
        constraints = [models.UniqueConstraint(fields=["table", "key"], name="index_unique_key")]

    def __str__(self) -> str:
        return self.key


class Row(models.Model):
    """A row (legacy: document). ``id`` is ``$sequence``; ``data`` the user columns (null values
    are not stored); ``permissions`` the item permissions as given; ``read_roles`` the roles of
    its ``read(...)`` permissions, for index-backed permission filtering."""

    id = models.BigAutoField(primary_key=True)
    # No index of its own: (table, id), (table, uid) and the others below all start with it,
    # and every row write would maintain one more b-tree for nothing.
    table = models.ForeignKey(Table, on_delete=models.DB_CASCADE, related_name="rows", db_index=False)
    uid = models.CharField("row ID", max_length=36)
    data = models.JSONField(default=dict)
    permissions = models.JSONField(default=list)
    read_roles = RolesField(default=list)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "databases_row"
        constraints = [models.UniqueConstraint(fields=["table", "uid"], name="row_unique_uid")]
        indexes = [
            models.Index(fields=["table", "id"], name="row_table_seq_idx"),
            models.Index(fields=["table", "created_at"], name="row_table_created_idx"),
            models.Index(fields=["table", "updated_at"], name="row_table_updated_idx"),
        ]

    def __str__(self) -> str:
        return self.uid


class Transaction(models.Model):
    """A database transaction (Appwrite 1.8): row writes staged under it are applied together
    on commit. ``owner`` is the user ID of the session that created it (``""`` for API keys
    and guests: then only API keys can see it, as Appwrite grants such a transaction no
    permissions). ``status`` is ``pending``, ``committed`` or ``failed``; ``operations`` counts
    the staged operations."""

    project = models.ForeignKey(Project, on_delete=models.DB_CASCADE, related_name="transactions")
    uid = models.CharField("transaction ID", max_length=36)
    owner = models.CharField(max_length=36, blank=True, default="")
    status = models.CharField(max_length=16, default="pending")
    operations = models.IntegerField(default=0)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "databases_transaction"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="transaction_unique_uid")]
        indexes = [models.Index(fields=["expires_at"], name="transaction_expires_idx")]

    def __str__(self) -> str:
        return self.uid


class TransactionOperation(models.Model):
    """One staged write of a transaction, applied in ``id`` order on commit.

    ``table_pk`` is the table's primary key (no foreign key: a table deleted after staging
    makes the commit fail instead of silently dropping the operation). ``data`` is the
    operation's payload as staged (see ``services.staging``); ``seen`` the row version
    (``updatedAt``, ISO text) the staging request saw, ``""`` when the row did not exist;
    ``roles`` the staging caller's roles (``null`` for an API key), with which the commit
    checks permissions again.
    """

    transaction = models.ForeignKey(Transaction, on_delete=models.DB_CASCADE, related_name="staged")
    table_pk = models.BigIntegerField()
    action = models.CharField(max_length=16)
    row_uid = models.CharField(max_length=36, blank=True, default="")
    data = models.JSONField(default=dict)
    seen = models.CharField(max_length=40, blank=True, default="")
    roles = models.JSONField(null=True, blank=True)
    user_uid = models.CharField(max_length=36, blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        db_table = "databases_transaction_op"
        indexes = [models.Index(fields=["transaction", "id"], name="transaction_op_order_idx")]

    def __str__(self) -> str:
        return f"{self.action} {self.row_uid}"
