"""Finding things, in real Chromium: the workspace page's chart of runs per
day by status and cost, its recent runs, a flow's Run button with inputs and
the test-run toggle, Triggers as a tab, and the nav marking where you are."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from runs.models import Run
from tests.e2e.conftest import color_of
from tests.runs.helpers import push
from tests.conftest import wait_in_page

AGENT = "---\nname: writer\ndescription: Writes.\ntools: [read]\n---\nWrite.\n"
FLOW = (
    '---\nname: weekly\ninputs: {topic: building inspections, tone: plain}\nschedule: "0 7 * * MON"\n'
    "timezone: Australia/Sydney\nwebhook: {signature: none}\n---\n1. [[writer]] — Write about the topic.\n"
)


def past_runs(workspace):
    now = timezone.now()
    made = []
    for days_ago, status, verdict, cost in [
        (0, "completed", "GOOD", "0.0130"),
        (0, "failed", "BAD", "0.0020"),
        (1, "completed", "QUIET", "0.0040"),
        (3, "cancelled", None, "0"),
        (3, "completed", "BLOCKED", "0.0100"),
    ]:
        run = Run.objects.create(
            account=workspace.account,
            workspace=workspace,
            name="weekly",
            status=status,
            verdict=verdict,
            cost_usd=Decimal(cost),
            headline=f"{verdict or status} run",
        )
        Run.objects.filter(pk=run.pk).update(created_at=now - timedelta(days=days_ago, minutes=len(made)))
        made.append(run)
    return made


@pytest.mark.e2e
def test_the_workspace_page_charts_runs_lists_them_and_starts_a_flow_with_its_inputs(
    live_server, signed_in, artifacts, workspace, alice
):
    push(workspace, {"agents/writer/agent.md": AGENT, "flows/weekly.md": FLOW})
    past_runs(workspace)
    page = signed_in(alice, width=1280, height=1000)
    page.goto(f"{live_server.url}/w/rank-desk/")

    # The nav marks where you are: the workspace above (not Home), Desk among its tabs, Triggers one of them.
    assert page.locator(".topbar nav a[aria-current=page]").all_text_contents() == ["rank-desk"]
    tabs = page.locator("nav.subnav a")
    assert tabs.all_text_contents() == ["Desk", "Runs", "Triggers", "Tools", "Browser sessions", "Notifications"]
    assert page.locator("nav.subnav a[aria-current=page]").text_content() == "Desk"

    # The chart: Chart.js drew the canvas with a bar series per status and the cost line.
    wait_in_page(page, "window.Chart && Chart.getChart(document.getElementById('runs-chart'))")
    drawn = page.evaluate("""() => { const c = Chart.getChart(document.getElementById('runs-chart'));
        return {labels: c.data.labels.length, sets: c.data.datasets.map(d => [d.label, d.data.reduce((a, b) => a + b, 0)])}; }""")
    assert drawn["labels"] == 14
    totals = dict(drawn["sets"])
    assert (totals["completed"], totals["failed"], totals["cancelled"]) == (3, 1, 1)
    assert abs(totals["cost (USD)"] - 0.029) < 1e-9
    assert page.locator("#runs-chart").bounding_box()["height"] > 150

    # Recent runs, in colour by state and verdict (computed styles).
    recent = page.locator("#recent-runs")
    assert recent.locator("tr").count() == 5
    assert color_of(recent.locator(".verdict-GOOD")) == "rgb(23, 112, 58)"
    assert color_of(recent.locator(".verdict-BAD")) == "rgb(179, 38, 30)"
    assert color_of(recent.locator(".verdict-QUIET")) == "rgb(93, 104, 120)"
    assert color_of(recent.locator(".badge.status-cancelled")) == "rgb(93, 104, 120)"
    blocked = color_of(recent.locator(".verdict-BLOCKED"))
    assert blocked == "rgb(106, 46, 163)"
    assert recent.locator("td.cost").first.text_content().strip() == "$0.0130"
    page.screenshot(path=str(artifacts / "workspace-page.png"), full_page=True)

    # A flow's Run button: its inputs (defaults shown), the test-run toggle, and the run it starts.
    flow = page.locator("#flow-weekly")
    flow.locator("summary.run-button").click()
    assert flow.locator("input[name='input:topic']").get_attribute("placeholder") == "building inspections"
    flow.locator("input[name='input:topic']").fill("roof repairs")
    flow.locator("input[name=test]").check()
    flow.screenshot(path=str(artifacts / "workspace-run-form.png"))
    flow.locator("button[type=submit]").click()
    page.wait_for_url("**/w/rank-desk/runs/run_*")
    started = Run.objects.order_by("-pk").first()
    assert page.url.endswith(f"/w/rank-desk/runs/{started.public_id}")
    assert (started.trigger, started.is_test) == ("manual", True)
    assert (started.inputs["topic"], started.inputs["tone"]) == ("roof repairs", "plain")

    # Triggers is a tab of the workspace, and it is marked when you are on it.
    page.goto(f"{live_server.url}/w/rank-desk/")
    page.locator("nav.subnav a", has_text="Triggers").click()
    page.wait_for_url("**/w/rank-desk/triggers/")
    assert page.locator("nav.subnav a[aria-current=page]").text_content() == "Triggers"
    assert page.locator(".topbar nav a[aria-current=page]").all_text_contents() == ["rank-desk"]
    assert page.locator("#schedules code").first.text_content() == "0 7 * * MON"
    page.screenshot(path=str(artifacts / "triggers-tab.png"), full_page=True)

    page.locator(".topbar nav a", has_text="Secrets").click()
    assert page.locator(".topbar nav a[aria-current=page]").all_text_contents() == ["Secrets"]
    page.locator(".topbar nav a", has_text="Notifications").click()
    assert page.locator(".topbar nav a[aria-current=page]").all_text_contents() == ["Notifications"]
