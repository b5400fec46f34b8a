from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("browsing", "0003_session_console_and_capacity_exceeded"),
    ]

    operations = [
        migrations.AddField(
            model_name="browsersession",
            name="private_addresses",
            field=models.BooleanField(default=False),
        ),
    ]
