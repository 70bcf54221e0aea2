from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('functions', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='execution',
            name='runner',
            field=models.CharField(blank=True, db_default='', default='', max_length=300),
        ),
        migrations.AddIndex(
            model_name='execution',
            index=models.Index(condition=models.Q(('status', 'processing')), fields=['updated_at'],
                               name='execution_processing_idx'),
        ),
    ]
