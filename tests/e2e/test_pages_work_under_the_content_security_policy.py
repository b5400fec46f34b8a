"""Every page carries a Content-Security-Policy that runs only this site's own scripts and styles — and, in real
Chromium, the dashboard pages, the workspace chart and a live Run page moved by a real worker load under it
with no violation and still update themselves through htmx. (Issue 29, item 8.)"""

from __future__ import annotations

import pytest

from runs.actions import check_start_run
from runs.models import Run
from tests.conftest import wait_in_page
from tests.e2e.test_workspace_page import past_runs
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push

WRITER = "---\nname: writer\ndescription: Writes.\ntools: [read]\n---\nWrite.\n"
WEEKLY = "---\nname: weekly\ninputs: {topic: inspections}\n---\n1. [[writer]] — Write about {{inputs.topic}}.\n"

# Collected in every document the page loads (an init script runs before the page's own, whatever the policy);
# each violation is handed to Python through an exposed binding, so none is lost to a navigation.
WATCH = """document.addEventListener('securitypolicyviolation', (e) => window.cspViolation(
    e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.documentURI + ':' + e.lineNumber));"""


class Watched:
    """A signed-in page whose CSP violations (the DOM event and Chromium's console sentence) are recorded."""

    def __init__(self, page):
        self.page = page
        self.violations: list[str] = []
        page.context.expose_function("cspViolation", self.record)
        page.context.add_init_script(WATCH)
        page.on(
            "console", lambda message: self.record(message.text) if "Content Security Policy" in message.text else None
        )

    def record(self, line: str) -> None:
        self.violations.append(line)

    def visit(self, url: str) -> str:
        """Loads `url`, waits until its scripts and htmx have settled, and returns the CSP header it carried."""
        response = self.page.goto(url)
        assert response is not None and response.status == 200, (url, response and response.status)
        self.page.wait_for_load_state("networkidle")
        return response.headers.get("content-security-policy", "")


@pytest.fixture
def watched(signed_in):
    return lambda user, **kw: Watched(signed_in(user, **kw))


@pytest.mark.e2e
def test_every_dashboard_page_and_the_chart_load_under_the_policy_with_no_violation(
    live_server, watched, workspace, alice
):
    push(workspace, {"agents/writer/agent.md": WRITER, "flows/weekly.md": WEEKLY})
    past_runs(workspace)
    run = Run.objects.filter(workspace=workspace).first()
    view = watched(alice)
    pages = [
        "/",
        "/library/",
        "/w/rank-desk/",
        "/w/rank-desk/runs/",
        "/w/rank-desk/triggers/",
        "/w/rank-desk/tools/",
        "/w/rank-desk/sessions/",
        "/w/rank-desk/notifications/",
        "/w/rank-desk/files/agents/writer/agent.md",
        f"/w/rank-desk/runs/{run.public_id}",
        "/settings/",
        "/settings/secrets",
        "/profile/notifications/",
    ]
    for path in pages:
        policy = view.visit(live_server.url + path)
        assert "script-src 'self'" in policy and "style-src 'self'" in policy, (path, policy)
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, (path, policy)

    # The chart, under the policy: Chart.js (a static file) drew the canvas from the page's JSON.
    view.visit(f"{live_server.url}/w/rank-desk/")
    wait_in_page(view.page, "window.Chart && Chart.getChart(document.getElementById('runs-chart'))")
    assert view.page.evaluate("Chart.getChart(document.getElementById('runs-chart')).data.datasets.length") >= 2
    assert view.page.locator("#runs-chart").bounding_box()["height"] > 150
    # htmx on a dashboard page: the file tree and forms are there, and htmx itself loaded and kept its own styles
    # out of the document (no injected <style>).
    assert view.page.evaluate("typeof htmx === 'object' && htmx.config.includeIndicatorStyles === false")
    assert view.page.locator("style").count() == 0
    assert view.violations == []

    # The pages of someone not signed in: sign-in, sign-up, the admin's sign-in.
    anonymous = watched(alice)
    anonymous.page.context.clear_cookies()
    for path in ["/accounts/login/", "/accounts/signup/", "/admin/login/"]:
        assert "script-src 'self'" in anonymous.visit(live_server.url + path), path
    assert anonymous.violations == []


@pytest.mark.e2e
def test_an_inline_script_is_refused_and_reported(live_server, watched, alice):
    """The watch above can see a violation: a script written into the page is refused, and the refusal recorded."""
    view = watched(alice)
    view.visit(f"{live_server.url}/")
    view.page.evaluate("""() => { const s = document.createElement('script'); s.textContent = 'window.ran = true';
                                  document.body.appendChild(s); }""")
    assert view.page.evaluate("window.ran === undefined")
    view.page.wait_for_timeout(200)  # the violation event is dispatched after the refusal
    assert any("script-src" in line for line in view.violations), view.violations


@pytest.mark.e2e
def test_a_live_run_page_updates_itself_under_the_policy(
    celery_worker_process, live_server, watched, artifacts, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/gated.md": "---\nname: gated\n---\n1. [[publisher]] ! — Publish the draft.\n",
        },
    )
    fake_provider.reply_text("GOOD published", usage=(900, 30))
    run = check_start_run(workspace=workspace, user=alice, flow="gated")
    view = watched(alice)
    policy = view.visit(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    assert "script-src 'self'" in policy
    view.page.evaluate("window.notReloaded = true")

    # The worker parks the step at its gate; htmx's poll brings that to the page without a reload.
    wait_in_page(
        view.page, "document.querySelector('#run-status').textContent.trim() === 'awaiting approval'", timeout=60_000
    )
    view.page.locator("#step-1 button.approve").click()
    wait_in_page(view.page, "document.querySelector('#run-status').textContent.trim() === 'completed'", timeout=60_000)
    assert view.page.evaluate("window.notReloaded") is True
    # A step's trace loads when it is opened (htmx's `toggle once`), under the policy too.
    view.page.locator("#step-1 details.trace-box > summary").click()
    view.page.locator("#step-1 .ev").first.wait_for(timeout=30_000)
    view.page.screenshot(path=str(artifacts / "run-page-under-csp.png"), full_page=True)
    assert view.violations == []
