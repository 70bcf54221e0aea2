from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('functions', '0002_execution_runner'),
    ]

    operations = [
        migrations.AddField(
            model_name='deployment',
            name='template',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
