"""Input schemas for the storage endpoints."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.conf import settings
from pydantic import AfterValidator, Field, StringConstraints

from apps.core.domain.ids import NewId
from apps.core.http.inputs import Bool, LooseBool, Strict

IdParam = Annotated[str, StringConstraints(min_length=1, max_length=36)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Color = Annotated[str, StringConstraints(pattern=r"^#?[0-9a-fA-F]{6}$")]


def _max_file_size(value: int) -> int:
    limit = settings.STORAGE_MAX_FILE_SIZE
    if not 1 <= value <= limit:
        raise ValueError(f"Value must be a valid range between 1 and {limit:,}")
    return value


def _extensions(value: list[str]) -> list[str]:
    if len(value) > 100 or any(not isinstance(v, str) or not 0 < len(v) <= 64 for v in value):
        raise ValueError("Value must be an array of at most 100 extensions of 1-64 chars")
    return [v.lower().lstrip(".") for v in value]


class BucketFields(Strict):
    name: Name
    permissions: list[str] | None = None
    fileSecurity: LooseBool = False
    enabled: LooseBool = True
    maximumFileSize: Annotated[int, AfterValidator(_max_file_size)] | None = None
    allowedFileExtensions: Annotated[list[str], AfterValidator(_extensions)] = Field(default_factory=list)
    compression: Literal["none", "gzip", "zstd"] = "none"
    encryption: LooseBool = True
    antivirus: LooseBool = True
    transformations: LooseBool = True
    # Sent by SDK 27, newer than the server version we follow (contract header): accepted, ignored.
    description: Annotated[str, StringConstraints(max_length=1024)] = ""
    stripMetadata: Bool = False


class BucketCreate(BucketFields):
    bucketId: NewId


class BucketUpdate(BucketFields):
    bucketId: IdParam


class BucketRef(Strict):
    bucketId: IdParam


class ListParams(Strict):
    queries: list[str] | None = None
    search: Annotated[str, StringConstraints(max_length=256)] = ""
    total: LooseBool = True


class FilesList(ListParams):
    bucketId: IdParam


class FileCreate(Strict):
    """Multipart upload fields; ``file`` is an ``UploadedPart`` (checked by the handler)."""

    bucketId: IdParam
    fileId: NewId
    file: Any
    permissions: list[str] | None = None
    folder: Annotated[str, StringConstraints(max_length=255)] = ""


class FileRef(Strict):
    bucketId: IdParam
    fileId: IdParam
    token: str = ""


class FileUpdate(Strict):
    bucketId: IdParam
    fileId: IdParam
    name: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    permissions: list[str] | None = None


class FilePreview(FileRef):
    width: Annotated[int, Field(ge=0, le=4000)] = 0
    height: Annotated[int, Field(ge=0, le=4000)] = 0
    gravity: Literal["center", "top-left", "top", "top-right", "left", "right", "bottom-left", "bottom",
                     "bottom-right", "auto"] = "center"
    quality: Annotated[int, Field(ge=-1, le=100)] = -1
    borderWidth: Annotated[int, Field(ge=0, le=100)] = 0
    borderColor: Color | None = None
    borderRadius: Annotated[int, Field(ge=0, le=4000)] = 0
    opacity: Annotated[float, Field(ge=0, le=1)] = 1.0
    rotation: Annotated[int, Field(ge=-360, le=360)] = 0
    background: Color | None = None
    output: Literal["jpg", "jpeg", "png", "webp", "gif", ""] = ""
