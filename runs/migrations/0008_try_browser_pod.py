from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0007_status_reason'),
    ]

    operations = [
        migrations.AddField(
            model_name='try',
            name='image',
            field=models.CharField(blank=True, max_length=10),
        ),
        migrations.AddField(
            model_name='try',
            name='pod_line',
            field=models.CharField(blank=True, max_length=300),
        ),
    ]
