from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("accounts", "0006_token_email_totp_step")]

    operations = [
        migrations.AddField(
            model_name="user",
            name="impersonator",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
