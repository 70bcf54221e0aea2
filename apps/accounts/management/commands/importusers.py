"""``manage.py importusers <project> <file> --format firebase|supabase|appwrite``: create a
project's users from another system's export, keeping their passwords (imported hashes are
checked at sign-in and replaced by argon2 on the first good one).

Users are written in batches, one transaction per batch: a batch is stored whole, and a record
that clashes (a taken ID, email or phone, in the project or earlier in the file) is refused,
never half made. A progress bar (tqdm) runs on stderr; the summary and every refused record
with its reason go to stdout, and with ``--refused-file`` to a CSV as well.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.passwords import importers


class Command(BaseCommand):
    help = "Import users (with their password hashes) from a Firebase, Supabase/GoTrue or Appwrite export."

    def add_arguments(self, parser):
        parser.add_argument("project", help="project ID")
        parser.add_argument("file", help="the export: .json or .csv")
        parser.add_argument("--format", required=True, choices=importers.FORMATS)
        parser.add_argument("--batch-size", type=int, default=500, help="users per transaction (default 500)")
        parser.add_argument("--firebase-signer-key", default="", help="Firebase base64_signer_key")
        parser.add_argument("--firebase-salt-separator", default="", help="Firebase base64_salt_separator")
        parser.add_argument("--firebase-rounds", type=int, default=8)
        parser.add_argument("--firebase-mem-cost", type=int, default=14)
        parser.add_argument("--refused-file", default="", help="also write refused records to this CSV")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, **opts):
        from tqdm import tqdm

        from apps.projects.models import Project

        project = Project.objects.filter(uid=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        path = Path(opts["file"])
        kind = path.suffix.lower().lstrip(".")
        if kind not in ("json", "csv"):
            raise CommandError("the export must be a .json or a .csv file")
        if opts["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1")
        firebase = None
        if opts["firebase_signer_key"]:
            firebase = importers.FirebaseHash(opts["firebase_signer_key"], opts["firebase_salt_separator"],
                                              opts["firebase_rounds"], opts["firebase_mem_cost"])
        try:
            items = list(importers.read(path.read_text(encoding="utf-8-sig"), fmt=opts["format"], kind=kind,
                                        firebase=firebase))
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {path}: {exc}") from None

        refused: list[importers.Refusal] = [i for i in items if isinstance(i, importers.Refusal)]
        records = [i for i in items if isinstance(i, importers.Record)]
        created = 0
        bar = tqdm(total=len(items), unit="user", disable=opts["no_progress"], file=sys.stderr)
        bar.update(len(refused))
        seen: dict[str, set] = {"uid": set(), "email": set(), "phone": set()}
        size = opts["batch_size"]
        for start in range(0, len(records), size):
            batch = records[start:start + size]
            made, out = _store_batch(project, batch, seen)
            created += made
            refused.extend(out)
            bar.update(len(batch))
        bar.close()

        refused.sort(key=lambda r: r.line)
        self.stdout.write(f"Imported {created} user(s) into {project.uid}; refused {len(refused)}.")
        for r in refused:
            self.stdout.write(f"  record {r.line} ({r.uid or 'no id'}): {r.reason}")
        if opts["refused_file"]:
            with open(opts["refused_file"], "w", newline="", encoding="utf-8") as out:
                writer = csv.writer(out)
                writer.writerow(["record", "userId", "reason"])
                writer.writerows([r.line, r.uid, r.reason] for r in refused)


def _clash(record: importers.Record, seen: dict[str, set]) -> str:
    for name in ("uid", "email", "phone"):
        value = getattr(record, name)
        if value and value in seen[name]:
            return f"the {'ID' if name == 'uid' else name} {value!r} is already taken"
    return ""


def _store_batch(project, batch: list[importers.Record], seen: dict[str, set]) -> tuple[int, list]:
    """Create a batch of users in one transaction; returns ``(created, refusals)``."""
    from apps.accounts.models import User

    refusals = []
    with transaction.atomic():
        taken = User.objects.filter(project=project)
        for name, column in (("uid", "uid"), ("email", "email"), ("phone", "phone")):
            values = [getattr(r, name) for r in batch if getattr(r, name)]
            seen[name].update(taken.filter(**{f"{column}__in": values}).values_list(column, flat=True))
        now = timezone.now()
        keep, lines = [], []
        for record in batch:
            reason = _clash(record, seen)
            if reason:
                refusals.append(importers.Refusal(record.line, record.uid, reason))
                continue
            for name in ("uid", "email", "phone"):
                if getattr(record, name):
                    seen[name].add(getattr(record, name))
            lines.append(record.line)
            keep.append(User(project=project, uid=record.uid, email=record.email, phone=record.phone,
                             name=record.name, password=record.password, status=record.status,
                             labels=record.labels, prefs=record.prefs, email_verification=record.email_verification,
                             phone_verification=record.phone_verification,
                             registration=record.registration or now,
                             password_update=now if record.password else None, created_at=now, updated_at=now))
        try:
            with transaction.atomic():
                User.objects.bulk_create(keep)
            return len(keep), refusals
        except IntegrityError:  # a user created through the API meanwhile: find it one by one
            made = 0
            for line, user in zip(lines, keep, strict=True):
                try:
                    with transaction.atomic():
                        user.save(force_insert=True)
                    made += 1
                except IntegrityError:
                    refusals.append(importers.Refusal(line, user.uid, "the ID, email or phone was taken meanwhile"))
            return made, refusals
