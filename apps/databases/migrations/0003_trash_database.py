"""The database (in the internal trash project) that holds deleted tables while the worker
removes their rows (apps.databases.tasks)."""

import django.utils.timezone
from django.db import migrations

TRASH_UID = "~trash"


def create(apps, schema_editor):
    Project = apps.get_model("projects", "Project")
    Database = apps.get_model("databases", "Database")
    trash = Project.objects.get(uid=TRASH_UID)
    now = django.utils.timezone.now()
    Database.objects.get_or_create(project=trash, uid=TRASH_UID,
                                   defaults={"name": "Deleted tables", "enabled": False, "created_at": now,
                                             "updated_at": now})


def remove(apps, schema_editor):
    apps.get_model("databases", "Database").objects.filter(uid=TRASH_UID, project__uid=TRASH_UID).delete()


class Migration(migrations.Migration):
    dependencies = [("databases", "0002_read_roles_gin"), ("projects", "0004_trash_project")]
    operations = [migrations.RunPython(create, remove)]
