"""Drop the rows table's own index on ``table_id``: every other index of the table starts with
that column, so it only cost one more b-tree update per row write.

The index is dropped by name with SQL, not by ``AlterField``: on SQLite Django would rebuild the
whole rows table for it, which drops the expression indexes that user-defined indexes create
with their own DDL (apps/databases/services/ddl.py)."""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "databases_row_table_id_7491aeb6"  # Django's name for the ForeignKey's index


class Migration(migrations.Migration):

    dependencies = [
        ('databases', '0004_transactions'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(f"DROP INDEX IF EXISTS {INDEX}",
                                  reverse_sql=f'CREATE INDEX IF NOT EXISTS {INDEX} ON databases_row ("table_id")'),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='row',
                    name='table',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.DB_CASCADE,
                                            related_name='rows', to='databases.table'),
                ),
            ],
        ),
    ]
