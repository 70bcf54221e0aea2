"""Input schemas of the functions endpoints (Appwrite 1.8 parameters; unknown ones are 400)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from apps.core.domain.events import event_name
from apps.core.domain.ids import NewId
from apps.core.http.inputs import Bool, LooseBool, Strict

IdParam = Annotated[str, StringConstraints(min_length=1, max_length=36)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]
MAX_BODY = 10 * 1024 * 1024  # characters of an execution body (Appwrite: Text(10485760))


def _cron(value: str) -> str:
    import datetime as dt

    from apps.functions.cron import next_after

    if value:  # ValueError -> 400 general_argument_invalid: malformed, or a day that never comes (Feb 30)
        next_after(value, dt.datetime.now(dt.UTC))
    return value


def _events(value: list[str]) -> list[str]:
    """At most 100 names, each in the event grammar webhooks use (:func:`event_name`)."""
    if len(value) > 100:
        raise ValueError("Value must be an array of at most 100 event names")
    for name in value:
        event_name(name)
    return value


def _scopes(value: list[str]) -> list[str]:
    from apps.core.http.auth import KEY_SCOPES

    unknown = sorted(set(value) - KEY_SCOPES)
    if unknown:
        raise ValueError(f"Unknown scope(s): {', '.join(unknown)}")
    return value


def _roles(value: list[str]) -> list[str]:
    if len(value) > 100 or any(not isinstance(v, str) or not 0 < len(v) <= 128 for v in value):
        raise ValueError("Value must be an array of at most 100 roles")
    return value


class FunctionFields(Strict):
    name: Name
    runtime: Annotated[str, StringConstraints(min_length=1, max_length=32)] | None = None
    execute: Annotated[list[str], AfterValidator(_roles)] = Field(default_factory=list)
    events: Annotated[list[str], AfterValidator(_events)] = Field(default_factory=list)
    schedule: Annotated[str, StringConstraints(max_length=128), AfterValidator(_cron)] = ""
    timeout: Annotated[int, Field(ge=1)] = 15
    enabled: Bool = True
    logging: Bool = True
    entrypoint: Annotated[str, StringConstraints(max_length=1024)] = ""
    commands: Annotated[str, StringConstraints(max_length=8192)] = ""
    scopes: Annotated[list[str], AfterValidator(_scopes)] = Field(default_factory=list)
    specification: Annotated[str, StringConstraints(max_length=64)] = ""
    buildSpecification: Annotated[str, StringConstraints(max_length=64)] = ""
    runtimeSpecification: Annotated[str, StringConstraints(max_length=64)] = ""
    deploymentRetention: Annotated[int, Field(ge=0, le=36500)] = 0  # days (Appwrite: 0 to 100 years)
    description: Annotated[str, StringConstraints(max_length=1024)] = ""
    # Git integration parameters: accepted, not supported (no VCS provider on this server).
    installationId: str = ""
    providerRepositoryId: str = ""
    providerBranch: str = ""
    providerSilentMode: Bool = False
    providerRootDirectory: str = ""
    providerBranches: list[str] = Field(default_factory=list)
    providerPaths: list[str] = Field(default_factory=list)
    interval: Any = None
    emailEnabled: Bool = False


class FunctionCreate(FunctionFields):
    functionId: NewId
    runtime: Annotated[str, StringConstraints(min_length=1, max_length=32)]


class FunctionUpdate(FunctionFields):
    functionId: IdParam


class FunctionRef(Strict):
    functionId: IdParam


class ListParams(Strict):
    queries: list[str] | None = None
    search: Annotated[str, StringConstraints(max_length=256)] = ""
    total: LooseBool = True


class TotalOnly(Strict):
    total: LooseBool = True


class SpecificationsList(Strict):
    type: str = ""
    total: LooseBool = True


class FunctionChildList(ListParams):
    functionId: IdParam


class DeploymentCreate(Strict):
    """Multipart upload fields; ``code`` is an ``UploadedPart`` (checked by the handler)."""

    functionId: IdParam
    code: Any = None
    activate: LooseBool = False
    entrypoint: Annotated[str, StringConstraints(max_length=1024)] = ""
    commands: Annotated[str, StringConstraints(max_length=8192)] = ""


class DeploymentRef(Strict):
    functionId: IdParam
    deploymentId: IdParam


class DeploymentActivate(Strict):
    functionId: IdParam
    deploymentId: IdParam


class DeploymentDuplicate(Strict):
    functionId: IdParam
    deploymentId: IdParam
    buildId: str = ""


class DeploymentDownload(DeploymentRef):
    type: Literal["source", "output"] = "source"
    token: str = ""


def _template_path(value: str) -> str:
    """A path inside the template repository (``rootDirectory``, ``reference``): no ``..``
    segment, no control characters."""
    if any(part == ".." for part in value.split("/")) or any(ord(c) < 32 or c == "\\" for c in value):
        raise ValueError("Value must be a path inside the repository")
    return value


def _git_name(value: str) -> str:
    if value in (".", ".."):
        raise ValueError("Value must be a GitHub owner or repository name")
    return value


GitName = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.-]+$"),
                    AfterValidator(_git_name)]


class TemplateDeployment(Strict):
    """Appwrite 1.7+'s createTemplateDeployment; the archive comes from ``FUNCTIONS_TEMPLATE_SOURCE``."""

    functionId: IdParam
    repository: GitName
    owner: GitName
    rootDirectory: Annotated[str, StringConstraints(max_length=128), AfterValidator(_template_path)]
    type: Literal["commit", "branch", "tag"]
    reference: Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_./-]+$"),
                         AfterValidator(_template_path)]
    activate: Bool = False


class ExecutionCreate(Strict):
    functionId: IdParam
    body: Annotated[str, StringConstraints(max_length=MAX_BODY)] = ""
    async_: LooseBool = Field(False, alias="async")
    path: Annotated[str, StringConstraints(max_length=2048, pattern=r"^/")] = "/"
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"] = "POST"
    headers: dict[str, Any] | None = None
    scheduledAt: str | None = None


class ExecutionRef(Strict):
    functionId: IdParam
    executionId: IdParam


class ExecutionList(Strict):
    functionId: IdParam
    queries: list[str] | None = None
    search: Annotated[str, StringConstraints(max_length=256)] = ""
    total: LooseBool = True


VarKey = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9_]+$")]
VarValue = Annotated[str, StringConstraints(max_length=8192)]


class VariableCreate(Strict):
    functionId: IdParam
    variableId: NewId = "unique()"
    key: VarKey
    value: VarValue
    secret: Bool = False
    description: Annotated[str, StringConstraints(max_length=1024)] = ""


class VariableUpdate(Strict):
    functionId: IdParam
    variableId: IdParam
    key: VarKey | None = None
    value: VarValue | None = None
    secret: Bool | None = None
    description: Annotated[str, StringConstraints(max_length=1024)] | None = None


class VariableRef(Strict):
    functionId: IdParam
    variableId: IdParam


class VariableList(Strict):
    functionId: IdParam
    queries: list[str] | None = None
    total: LooseBool = True


class Unsupported(BaseModel):
    """VCS deployment parameters: accepted, then refused as unsupported (no GitHub App here)."""

    model_config = ConfigDict(extra="allow")
    functionId: IdParam
