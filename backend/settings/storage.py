"""File storage: the backend (local directory or S3), upload limits, download streaming."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from backend.settings.base import BASE_DIR, _env, _env_float, _env_int

# --- Storage (apps.storage; docs/storage.md) ------------------------------------------------------
# Where file bytes live: "local" (a directory, STORAGE_ROOT) or "s3" (any S3-compatible service
# through django-storages). Keys are server-generated; client file names are only metadata.
STORAGE_BACKEND = _env("STORAGE_BACKEND", "local").lower()
if STORAGE_BACKEND not in {"local", "s3"}:
    raise ImproperlyConfigured(f"STORAGE_BACKEND must be 'local' or 's3', got {STORAGE_BACKEND!r}")
STORAGE_ROOT = _env("STORAGE_ROOT", str(BASE_DIR / "var" / "storage"))
# Chunks of unfinished uploads are kept here as part files (local disk in both modes; on the same
# filesystem as STORAGE_ROOT by default so finished local files are moved, not copied).
STORAGE_UPLOAD_DIR = _env("STORAGE_UPLOAD_DIR", str(Path(STORAGE_ROOT) / ".uploads"))
STORAGE_UPLOAD_EXPIRY = _env_int("STORAGE_UPLOAD_EXPIRY", 86400, minimum=1)  # seconds of inactivity
STORAGE_CLEANUP_INTERVAL = _env_int("STORAGE_CLEANUP_INTERVAL", 600, minimum=0)  # seconds; 0 = never inline
STORAGE_LIMIT = _env_int("STORAGE_LIMIT", 30000000, minimum=1)  # bytes: default bucket maximumFileSize
STORAGE_MAX_FILE_SIZE = _env_int("STORAGE_MAX_FILE_SIZE", 5 * 1024**3, minimum=1)  # bytes: cap on maximumFileSize
# File bodies one ASGI process streams at once; later downloads get their head and wait for a
# slot (FIFO). Bounds the memory of many slow readers (each holds one read of
# READ_SIZE = 256 KiB in flight); 0 = no bound.
STORAGE_STREAMS_MAX = _env_int("STORAGE_STREAMS_MAX", 32, minimum=0)
# Seconds a streaming download may go without its client taking a byte before it is cut off
# (nginx's send_timeout default), so clients that stop reading cannot hold the slots; 0 = never.
STORAGE_SEND_TIMEOUT = _env_float("STORAGE_SEND_TIMEOUT", 60.0)
STORAGE_PREVIEW_MAX_SIZE = _env_int("STORAGE_PREVIEW_MAX_SIZE", 10 * 1024 * 1024, minimum=1)  # bytes (Appwrite: 10 MB)
# Previews (apps.storage.preview): images declaring more pixels are refused before decoding
# (403 storage_invalid_file); the renders of one process hold at most STORAGE_PREVIEW_PIXEL_BUDGET
# decoded pixels at once (Pillow keeps 4 bytes a pixel: 48 Mpx is ~190 MB), later ones wait.
STORAGE_PREVIEW_MAX_PIXELS = _env_int("STORAGE_PREVIEW_MAX_PIXELS", 40_000_000, minimum=1)
STORAGE_PREVIEW_PIXEL_BUDGET = _env_int("STORAGE_PREVIEW_PIXEL_BUDGET", 48_000_000, minimum=1_000_000)
STORAGE_S3_BUCKET = _env("STORAGE_S3_BUCKET")
STORAGE_S3_ENDPOINT_URL = _env("STORAGE_S3_ENDPOINT_URL")
STORAGE_S3_REGION = _env("STORAGE_S3_REGION", "us-east-1")
STORAGE_S3_ACCESS_KEY_ID = _env("STORAGE_S3_ACCESS_KEY_ID")
STORAGE_S3_SECRET_ACCESS_KEY = _env("STORAGE_S3_SECRET_ACCESS_KEY")
STORAGE_S3_PREFIX = _env("STORAGE_S3_PREFIX")
if STORAGE_BACKEND == "s3":
    if not STORAGE_S3_BUCKET:
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs STORAGE_S3_BUCKET.")
    _files_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": STORAGE_S3_BUCKET,
            "endpoint_url": STORAGE_S3_ENDPOINT_URL or None,
            "region_name": STORAGE_S3_REGION,
            "access_key": STORAGE_S3_ACCESS_KEY_ID or None,
            "secret_key": STORAGE_S3_SECRET_ACCESS_KEY or None,
            "location": STORAGE_S3_PREFIX,
            "file_overwrite": True,
            "default_acl": None,
            "querystring_auth": False,
        },
    }
else:
    _files_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": STORAGE_ROOT, "file_permissions_mode": 0o640, "directory_permissions_mode": 0o750},
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "files": _files_storage,
}
