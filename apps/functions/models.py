"""Functions, their deployments, executions and variables (Appwrite's Functions service).

The /v1 path reads and writes these tables with plain SQL (``apps.core.drivers.db``); the models own the
schema, the migrations and the admin. Deployment code never lives in the database: the source
archive and the build output are files under ``FUNCTIONS_ROOT`` (``apps.functions.code``).
"""

from __future__ import annotations

from django.db import models

from apps.projects.models import Project


class Function(models.Model):
    """A function. ``execute`` is a list of roles allowed to execute it; ``events`` a list of
    event patterns (``databases.*.tables.*.rows.*.create``); ``schedule`` a 5-field cron
    expression ('' = none) whose next run time is ``schedule_next``; ``timeout`` in seconds;
    ``scopes`` the API scopes of the execution's dynamic key. ``deployment`` is the active one."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    uid = models.CharField("function ID", max_length=36)
    name = models.CharField(max_length=128)
    description = models.CharField(max_length=1024, blank=True, default="")
    runtime = models.CharField(max_length=32)
    execute = models.JSONField(default=list, blank=True)
    events = models.JSONField(default=list, blank=True)
    has_events = models.BooleanField(default=False)
    schedule = models.CharField(max_length=128, blank=True, default="")
    schedule_next = models.DateTimeField(null=True, blank=True)
    timeout = models.IntegerField(default=15)
    enabled = models.BooleanField(default=True)
    logging = models.BooleanField(default=True)
    entrypoint = models.CharField(max_length=1024, blank=True, default="")
    commands = models.CharField(max_length=8192, blank=True, default="")
    scopes = models.JSONField(default=list, blank=True)
    specification = models.CharField(max_length=64, default="s-1vcpu-512mb")
    deployment_retention = models.IntegerField(default=0)
    deployment = models.ForeignKey("Deployment", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    version = models.IntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "functions_function"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="function_unique_uid")]
        indexes = [models.Index(fields=["project", "has_events"], name="function_events_idx")]

    def __str__(self) -> str:
        return self.uid


class Deployment(models.Model):
    """A code upload of a function. ``status``: ``uploading`` (chunks still arriving; not an
    Appwrite status, shown as ``waiting``), ``waiting``, ``processing``, ``building``,
    ``ready``, ``canceled``, ``failed``. Sizes in bytes, ``build_duration`` in seconds."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    function = models.ForeignKey(Function, on_delete=models.CASCADE, related_name="deployments")
    uid = models.CharField("deployment ID", max_length=36)
    entrypoint = models.CharField(max_length=1024)
    commands = models.CharField(max_length=8192, blank=True, default="")
    activate = models.BooleanField(default=False)
    status = models.CharField(max_length=12, default="waiting")
    source_size = models.BigIntegerField(default=0)
    build_size = models.BigIntegerField(default=0)
    build_logs = models.TextField(blank=True, default="")
    build_duration = models.FloatField(default=0)
    chunks_total = models.IntegerField(default=1)
    chunks_uploaded = models.IntegerField(default=0)
    # A template deployment's source (owner, repository, rootDirectory, type, reference): the worker
    # downloads it before the build (apps.functions.templates). Empty for an upload.
    template = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "functions_deployment"
        constraints = [models.UniqueConstraint(fields=["function", "uid"], name="deployment_unique_uid")]

    def __str__(self) -> str:
        return self.uid


class Execution(models.Model):
    """One run of a function. ``trigger``: ``http``, ``schedule``, ``event``; ``status``:
    ``waiting``, ``processing``, ``completed``, ``failed``, ``scheduled``. ``request`` holds
    what the run needs (method, path, headers, body in base64) until it ran; response headers
    and body are kept only for synchronous executions (Appwrite). ``duration`` in seconds."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    function = models.ForeignKey(Function, on_delete=models.CASCADE, related_name="executions")
    uid = models.CharField("execution ID", max_length=36)
    deployment_uid = models.CharField(max_length=36, blank=True, default="")
    permissions = models.JSONField(default=list, blank=True)
    trigger = models.CharField(max_length=12)
    status = models.CharField(max_length=12)
    request_method = models.CharField(max_length=8, default="POST")
    request_path = models.CharField(max_length=2048, default="/")
    request_headers = models.JSONField(default=list, blank=True)
    request_body = models.TextField(blank=True, default="")
    user_uid = models.CharField(max_length=36, blank=True, default="")
    response_status_code = models.IntegerField(default=0)
    response_body = models.TextField(blank=True, default="")
    response_headers = models.JSONField(default=list, blank=True)
    logs = models.TextField(blank=True, default="")
    errors = models.TextField(blank=True, default="")
    duration = models.FloatField(default=0)
    scheduled_at = models.DateTimeField(null=True, blank=True)
    # "<host>:<pid>" of the API process running a synchronous execution (empty otherwise): when
    # that process is gone the execution is failed (apps.functions.maintenance).
    runner = models.CharField(max_length=300, blank=True, default="", db_default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "functions_execution"
        constraints = [models.UniqueConstraint(fields=["function", "uid"], name="execution_unique_uid")]
        indexes = [
            models.Index(fields=["function", "created_at"], name="execution_function_idx"),
            # the executions in progress, which the worker checks for a stopped runner
            models.Index(fields=["updated_at"], name="execution_processing_idx", condition=models.Q(status="processing")),
        ]

    def __str__(self) -> str:
        return self.uid


class Variable(models.Model):
    """An environment variable of a function. ``function`` is always set (the column stays
    nullable from an earlier schema); the project's own variables are the Project service's
    (``projects_variable``). A ``secret`` value is never returned."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    function = models.ForeignKey(Function, null=True, blank=True, on_delete=models.CASCADE, related_name="variables")
    uid = models.CharField("variable ID", max_length=36)
    key = models.CharField(max_length=255)
    value = models.TextField(blank=True, default="")
    secret = models.BooleanField(default=False)
    description = models.CharField(max_length=1024, blank=True, default="")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "functions_variable"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="functions_variable_unique_uid")]

    def __str__(self) -> str:
        return self.key
