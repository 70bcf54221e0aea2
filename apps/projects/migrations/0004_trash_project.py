"""The internal project that holds deleted resources until the worker has removed them
(apps.projects.trash)."""

from django.db import migrations

TRASH_UID = "~trash"


def create(apps, schema_editor):
    Project = apps.get_model("projects", "Project")
    Project.objects.get_or_create(uid=TRASH_UID, defaults={"name": "Deleted resources (removed by the worker)"})


def remove(apps, schema_editor):
    apps.get_model("projects", "Project").objects.filter(uid=TRASH_UID).delete()


class Migration(migrations.Migration):
    dependencies = [("projects", "0003_auth_setting_limits")]
    operations = [migrations.RunPython(create, remove)]
