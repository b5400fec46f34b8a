"""Marks of quarantines whose schedule is gone. Since the Schedule post_delete receiver
(notify/receivers.py on_schedule_deleted) a schedule row that goes takes its `quarantined` mark with
it; a schedule removed before that left its mark behind. A mark means "already announced", so a new
schedule of that flow quarantined before the flow next succeeds would go unannounced. This clears those
once. Going back has nothing to undo: the marks it deletes were wrong to keep."""
from django.db import migrations
from django.db.models import Exists, OuterRef


def forget_orphaned_quarantine_marks(apps, schema_editor) -> int:
    """Delete every `quarantined` mark no schedule of its workspace and flow (the mark's key) is left for.
    Returns how many went."""
    Mark = apps.get_model("notify", "Mark")
    Schedule = apps.get_model("runs", "Schedule")
    live = Schedule.objects.filter(workspace_id=OuterRef("workspace_id"), flow=OuterRef("key"))
    deleted, _ = Mark.objects.filter(event="quarantined").filter(~Exists(live)).delete()
    return deleted


class Migration(migrations.Migration):

    dependencies = [
        ('notify', '0006_leases_and_mail_outbox'),
        ('runs', '0008_try_browser_pod'),
    ]

    operations = [
        migrations.RunPython(forget_orphaned_quarantine_marks, migrations.RunPython.noop),
    ]
