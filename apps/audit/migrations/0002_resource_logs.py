import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0001_initial'),
    ]

    operations = [
        migrations.AlterField(
            model_name='log',
            name='user',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='logs', to='accounts.user'),
        ),
        migrations.AddIndex(
            model_name='log',
            index=models.Index(fields=['project', 'resource', '-time', '-id'], name='audit_log_resource_time_idx'),
        ),
    ]
