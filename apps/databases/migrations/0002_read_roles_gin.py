"""A GIN index on ``databases_row.read_roles`` (PostgreSQL only): a permission-filtered list
(``read_roles && <caller roles>``) becomes an index lookup instead of a scan."""

from django.db import migrations


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE INDEX IF NOT EXISTS row_read_roles_gin ON databases_row USING gin (read_roles)")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS row_read_roles_gin")


class Migration(migrations.Migration):
    dependencies = [("databases", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
