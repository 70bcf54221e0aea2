from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0006_project_service'),
    ]

    operations = [
        migrations.AddField(
            model_name='project',
            name='services_disabled',
            field=models.JSONField(blank=True, default=list, help_text="Services that refuse requests without an API key (Appwrite's service IDs, e.g. [\"storage\"]).", verbose_name='disabled services'),
        ),
        migrations.AddField(
            model_name='project',
            name='protocols_disabled',
            field=models.JSONField(blank=True, default=list, help_text='Protocols that refuse requests without an API key: "rest", "graphql", "websocket".', verbose_name='disabled protocols'),
        ),
    ]
