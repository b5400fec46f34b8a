"""In /admin/, a run is a record of what happened: staff find and read it — its inputs and plan as indented JSON,
the desk it ran as its workspace and revision — but cannot add one, nor change its status, verdict or cost."""

from __future__ import annotations

import html
from decimal import Decimal

import pytest

from runs.models import Run, Step
from tests.dashboard.test_signin_and_admin import staff_web  # noqa: F401 - the signed-in superuser
from tests.runs.helpers import push

pytestmark = pytest.mark.django_db

FLOW = "---\nname: weekly\n---\n1. [[writer]] — Write.\n"


@pytest.fixture
def run(workspace) -> Run:
    changeset = push(workspace, {"flows/weekly.md": FLOW}).changeset
    made = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="weekly",
        status="failed",
        verdict="BAD",
        cost_usd=Decimal("0.0123"),
        changeset=changeset,
        changeset_number=changeset.number,
        inputs={"topic": "building inspections"},
        plan=[{"number": 1, "agent": "writer", "task": "Write."}],
    )
    Step.objects.create(run=made, index=1, agent="writer", status="failed")
    return made


def test_there_is_no_add_run_and_the_add_page_is_refused(staff_web, run):
    listing = staff_web.get("/admin/runs/run/").content.decode()
    assert run.public_id in listing
    assert "/admin/runs/run/add/" not in listing
    assert staff_web.get("/admin/runs/run/add/").status_code == 403


def test_a_run_shows_its_inputs_and_plan_as_json_and_its_revision_with_no_field_to_change(staff_web, run):
    page = staff_web.get(f"/admin/runs/run/{run.pk}/change/").content.decode()
    text = html.unescape(page)
    assert '{\n  "topic": "building inspections"\n}' in text
    assert '"agent": "writer",\n    "number": 1,' in text
    assert f"rank-desk revision {run.changeset_number}" in text
    for field in ("status", "verdict", "cost_usd", "inputs", "plan", "changeset"):
        assert f'name="{field}"' not in page, field
    assert 'name="_save"' not in page


def test_a_post_to_the_change_page_changes_nothing(staff_web, run):
    answer = staff_web.post(
        f"/admin/runs/run/{run.pk}/change/", {"status": "completed", "verdict": "GOOD", "cost_usd": "0"}
    )
    assert answer.status_code == 403
    run.refresh_from_db()
    assert (run.status, run.verdict, run.cost_usd) == ("failed", "BAD", Decimal("0.0123"))
    assert staff_web.post(f"/admin/runs/run/{run.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Run.objects.filter(pk=run.pk).exists()


def test_a_step_is_read_only_too(staff_web, run):
    step = run.steps.get()
    page = staff_web.get(f"/admin/runs/step/{step.pk}/change/").content.decode()
    assert 'name="status"' not in page and 'name="_save"' not in page
    assert staff_web.get("/admin/runs/step/add/").status_code == 403
