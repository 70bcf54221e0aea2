"""Appwrite response models for storage: Bucket and File."""

from __future__ import annotations

from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_bool, as_dt, as_json


def bucket_model(row: dict) -> dict:
    """The Appwrite ``Bucket`` JSON; ``totalSize`` (bytes of its ready files) must be in ``row``."""
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "$permissions": as_json(row["permissions"]) or [],
        "fileSecurity": as_bool(row["file_security"]),
        "name": row["name"],
        "enabled": as_bool(row["enabled"]),
        "maximumFileSize": int(row["maximum_file_size"]),
        "allowedFileExtensions": as_json(row["allowed_file_extensions"]) or [],
        "compression": row["compression"],
        "encryption": as_bool(row["encryption"]),
        "antivirus": as_bool(row["antivirus"]),
        "transformations": as_bool(row["transformations"]),
        "totalSize": int(row.get("total_size") or 0),
    }


def file_model(row: dict, bucket_uid: str) -> dict:
    """The Appwrite ``File`` JSON. ``chunksTotal``/``chunksUploaded`` are JSON numbers (the web
    SDK compares them numerically); ``key`` is the folder-qualified display name
    (the virtual path the SDK documents), never the storage key."""
    folder = row.get("folder") or ""
    return {
        "$id": row["uid"],
        "bucketId": bucket_uid,
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "$permissions": as_json(row["permissions"]) or [],
        "name": row["name"],
        "folder": folder,
        "key": f"{folder.rstrip('/')}/{row['name']}" if folder else row["name"],
        "signature": row["signature"],
        "mimeType": row["mime_type"],
        "sizeOriginal": int(row["size_original"]),
        "sizeActual": int(row["size_actual"]),
        "chunksTotal": int(row["chunks_total"]),
        "chunksUploaded": int(row["chunks_uploaded"]),
        "encryption": False,
        "compression": "none",
    }
