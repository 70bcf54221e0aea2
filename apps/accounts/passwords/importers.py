"""Reading user exports of other systems for ``manage.py importusers``.

Each reader turns a JSON or CSV export into :class:`Record`\\ s (or :class:`Refusal`\\ s with the
reason) in the server's terms; password hashes are validated and converted by
``apps.accounts.passwords.imported``, so an imported user signs in with their old password.

* **Firebase** (``firebase auth:export users.json|users.csv``): ``localId``/UID, email,
  ``emailVerified``, ``passwordHash`` + ``salt`` (Firebase's modified scrypt; the project's
  hash parameters ``base64_signer_key``, ``base64_salt_separator``, ``rounds`` 8 and
  ``mem_cost`` 14 come from the Firebase console), ``displayName``, ``phoneNumber``,
  ``disabled``. The CSV has no header; its columns are Firebase's documented order.
* **Supabase / GoTrue** (rows of ``auth.users`` as JSON or CSV with a header): ``id``, ``email``,
  ``encrypted_password`` (bcrypt), ``email_confirmed_at``, ``phone`` (digits, ``+`` added),
  ``phone_confirmed_at``, ``raw_user_meta_data`` (``name`` or ``full_name``), ``banned_until``.
* **Appwrite** (``GET /v1/users`` pages: ``{"users": [...]}`` or a list; or CSV with these
  headers): ``$id``, ``email``, ``phone``, ``name``, ``password`` + ``hash`` + ``hashOptions``,
  ``emailVerification``, ``phoneVerification``, ``status``, ``labels``, ``prefs``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.passwords import imported as passwords
from apps.core.domain.ids import is_valid_id
from apps.core.errors import AppwriteError

FORMATS = ("firebase", "supabase", "appwrite")
FIREBASE_CSV_COLUMNS = (
    "localId", "email", "emailVerified", "passwordHash", "salt", "displayName", "photoUrl",
    "googleId", "googleEmail", "googleDisplayName", "googlePhotoUrl", "facebookId", "facebookEmail",
    "facebookDisplayName", "facebookPhotoUrl", "twitterId", "twitterEmail", "twitterDisplayName",
    "twitterPhotoUrl", "githubId", "githubEmail", "githubDisplayName", "githubPhotoUrl", "createdAt",
    "lastSignedInAt", "phoneNumber",
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_PHONE = re.compile(r"^\+[1-9]\d{6,14}$")
_LABEL = re.compile(r"^[A-Za-z0-9]{1,36}$")


@dataclass
class Record:
    """A user to create: ``password`` is the stored form (``""`` for none)."""

    line: int
    uid: str
    email: str = ""
    phone: str = ""
    name: str = ""
    password: str = ""
    status: bool = True
    email_verification: bool = False
    phone_verification: bool = False
    labels: list[str] = field(default_factory=list)
    prefs: dict = field(default_factory=dict)
    registration: dt.datetime | None = None


@dataclass
class Refusal:
    line: int
    uid: str
    reason: str


@dataclass(frozen=True)
class FirebaseHash:
    """The Firebase project's password hash parameters (console: Authentication > Users >
    Password hash parameters)."""

    signer_key: str
    salt_separator: str
    rounds: int = 8
    mem_cost: int = 14


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes", "t")


def _json_field(value: Any, default):
    if value in (None, ""):
        return default
    if isinstance(value, str):
        return json.loads(value)
    return value


def _when(value: Any) -> dt.datetime | None:
    """A timestamp: ISO 8601, or Firebase's milliseconds since the epoch."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    if text.isdigit():
        return dt.datetime.fromtimestamp(int(text) / 1000, dt.UTC)
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _finish(record: Record) -> Record:
    """Normalise and check the fields every format shares. Raises ``ValueError`` (the reason)."""
    record.email = record.email.strip().lower()
    if not is_valid_id(record.uid):
        raise ValueError(f"invalid user ID {record.uid!r} (1-36 chars of a-z, A-Z, 0-9, '.', '-', '_')")
    if record.email and (len(record.email) > 320 or not _EMAIL.fullmatch(record.email)):
        raise ValueError(f"invalid email {record.email!r}")
    if record.phone and not _PHONE.fullmatch(record.phone):
        raise ValueError(f"invalid phone number {record.phone!r} (E.164: '+' and 7-15 digits)")
    if len(record.name) > 128:
        raise ValueError("name longer than 128 characters")
    if len(record.labels) > 1000 or not all(isinstance(x, str) and _LABEL.fullmatch(x) for x in record.labels):
        raise ValueError("labels must be at most 1000 strings of 1-36 chars of A-Z, a-z, 0-9")
    if not isinstance(record.prefs, dict):
        raise ValueError("prefs must be a JSON object")
    record.labels = list(dict.fromkeys(record.labels))
    return record


def _hash(algorithm: str, value: str, **options) -> str:
    try:
        return passwords.imported(algorithm, value, **options)
    except AppwriteError as err:
        raise ValueError(f"password hash refused: {err.message}") from None


def _firebase(row: dict, line: int, params: FirebaseHash | None) -> Record:
    digest = row.get("passwordHash") or ""
    stored = ""
    if digest:
        if params is None:
            raise ValueError("has a password hash but the Firebase hash parameters were not given "
                             "(--firebase-signer-key, --firebase-salt-separator)")
        if (params.rounds, params.mem_cost) != (8, 14):
            raise ValueError("Firebase hashes with rounds/mem_cost other than 8/14 cannot be verified")
        stored = _hash("scryptMod", digest, scrypt_mod=passwords.ScryptModParams(
            row.get("salt") or "", params.salt_separator, params.signer_key))
    return Record(line=line, uid=str(row.get("localId") or ""), email=row.get("email") or "",
                  phone=row.get("phoneNumber") or "", name=row.get("displayName") or "", password=stored,
                  status=not _truthy(row.get("disabled", False)),
                  email_verification=_truthy(row.get("emailVerified", False)),
                  registration=_when(row.get("createdAt")))


def _supabase(row: dict, line: int) -> Record:
    meta = _json_field(row.get("raw_user_meta_data"), {}) or {}
    digest = row.get("encrypted_password") or ""
    phone = str(row.get("phone") or "").strip()
    if phone and not phone.startswith("+"):
        phone = "+" + phone
    banned = _when(row.get("banned_until"))
    return Record(line=line, uid=str(row.get("id") or ""), email=row.get("email") or "", phone=phone,
                  name=str(meta.get("name") or meta.get("full_name") or ""),
                  password=_hash("bcrypt", digest) if digest else "",
                  status=not (banned and banned > dt.datetime.now(dt.UTC)),
                  email_verification=bool(row.get("email_confirmed_at")),
                  phone_verification=bool(row.get("phone_confirmed_at")),
                  registration=_when(row.get("created_at")))


def _appwrite(row: dict, line: int) -> Record:
    digest = row.get("password") or ""
    algorithm = row.get("hash") or "argon2"
    options = _json_field(row.get("hashOptions"), {}) or {}
    stored = ""
    if digest:
        if algorithm == "scrypt":
            stored = _hash("scrypt", digest, scrypt=passwords.ScryptParams(
                salt=str(options.get("salt", "")), cpu=int(options.get("costCpu", 8)),
                memory=int(options.get("costMemory", 14)), parallel=int(options.get("costParallel", 1)),
                length=int(options.get("length", 64))))
        elif algorithm == "scryptMod":
            stored = _hash("scryptMod", digest, scrypt_mod=passwords.ScryptModParams(
                str(options.get("salt", "")), str(options.get("saltSeparator", "")), str(options.get("signerKey", ""))))
        else:
            stored = _hash(algorithm, digest, version=str(options.get("version", "")))
    return Record(line=line, uid=str(row.get("$id") or ""), email=row.get("email") or "", phone=row.get("phone") or "",
                  name=row.get("name") or "", password=stored, status=_truthy(row.get("status", True)),
                  email_verification=_truthy(row.get("emailVerification", False)),
                  phone_verification=_truthy(row.get("phoneVerification", False)),
                  labels=_json_field(row.get("labels"), []), prefs=_json_field(row.get("prefs"), {}),
                  registration=_when(row.get("registration")))


def _rows(text: str, fmt: str, kind: str) -> list[dict]:
    if kind == "json":
        data = json.loads(text)
        if isinstance(data, dict):
            data = data.get("users", [])
        if not isinstance(data, list):
            raise ValueError("the JSON export must be a list of users or an object with a 'users' list")
        return data
    if fmt == "firebase":
        return [dict(zip(FIREBASE_CSV_COLUMNS, values, strict=False)) for values in csv.reader(io.StringIO(text))
                if values]
    return list(csv.DictReader(io.StringIO(text)))


def read(text: str, *, fmt: str, kind: str, firebase: FirebaseHash | None = None) -> Iterator[Record | Refusal]:
    """Records and refusals of an export, in file order (``line`` is the 1-based record number).

    ``fmt`` is one of :data:`FORMATS`; ``kind`` is ``json`` or ``csv``. Raises ``ValueError``
    when the file as a whole cannot be read.
    """
    for line, row in enumerate(_rows(text, fmt, kind), start=1):
        uid = ""
        try:
            if not isinstance(row, dict):
                raise ValueError("not an object")
            if fmt == "firebase":
                record = _firebase(row, line, firebase)
            elif fmt == "supabase":
                record = _supabase(row, line)
            else:
                record = _appwrite(row, line)
            uid = record.uid
            yield _finish(record)
        except (ValueError, TypeError, json.JSONDecodeError) as exc:
            uid = uid or str((row or {}).get("localId") or (row or {}).get("id") or (row or {}).get("$id") or "") \
                if isinstance(row, dict) else ""
            yield Refusal(line, uid, str(exc))
