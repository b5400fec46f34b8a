"""Reservations a run never held, or no longer holds, given back: before this release a run that no cap limited
was settled as if its calls had been reserved for (its reserved_usd went below zero), and a run that ended kept
the booking of a call its lost worker never settled. Both made a workspace window count the wrong spend."""
from django.db import migrations
from django.db.models import Q


def give_back(apps, schema_editor):
    Run = apps.get_model("runs", "Run")
    Run.objects.filter(Q(reserved_usd__lt=0) | Q(status__in=["completed", "failed", "cancelled"])) \
        .exclude(reserved_usd=0).update(reserved_usd=0)


class Migration(migrations.Migration):
    dependencies = [("runs", "0009_fewer_indexes")]
    operations = [migrations.RunPython(give_back, migrations.RunPython.noop)]
