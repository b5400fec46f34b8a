"""In real Chromium: the approve page a mail links to shows what the previous
step produced; Profile → Notifications saves each switch with visible
feedback, in place, and shows no raw markdown."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from notify.links import approval_token
from notify.preferences import may_send
from runs.models import Approval, Run, Step
from tests.e2e.conftest import color_of


@pytest.mark.e2e
def test_the_approve_page_from_a_mail_shows_the_previous_steps_output(
    live_server, chromium, artifacts, workspace, settings
):
    settings.FOLDRUN_PUBLIC_URL = live_server.url
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="awaiting-approval")
    Step.objects.create(
        run=run,
        index=1,
        agent="writer",
        status="completed",
        output="Draft: roof repairs in winter\n\nThree things to check before the rain.",
    )
    gate = Step.objects.create(
        run=run, index=2, agent="publisher", task="Publish the draft.", status="awaiting-approval"
    )
    Approval.objects.create(run=run, step=gate)
    token = approval_token(gate.public_id, "approve", timezone.now() + timedelta(days=1))
    page = chromium.new_page(viewport={"width": 390, "height": 844})  # read on a phone, not signed in
    page.goto(f"{live_server.url}/decide/{token}")
    assert page.locator("#previous-output").text_content() == "What step 1 produced"
    assert page.locator("pre.output").text_content().startswith("Draft: roof repairs in winter")
    button = page.locator("form.decide-form button")
    assert (button.text_content(), color_of(button, "background-color")) == ("Approve", "rgb(23, 112, 58)")
    page.screenshot(path=str(artifacts / "decide-page-phone.png"), full_page=True)
    assert Approval.objects.get(step=gate).state == "pending"  # opening the page decided nothing


@pytest.mark.e2e
def test_profile_notifications_saves_in_place_with_feedback_and_no_raw_markdown(
    live_server, signed_in, artifacts, alice, workspace
):
    page = signed_in(alice)
    page.goto(f"{live_server.url}/profile/notifications/")
    page.evaluate("window.notReloaded = true")
    alerts = page.locator("tr[data-category=run-alerts]")
    assert "`" not in page.locator("table.preferences").inner_text()
    assert alerts.locator("td code").all_text_contents() == ["notify:", "sla", "budget"]
    alerts.locator("li", has_text="rank-desk").locator("input[type=checkbox]").uncheck()
    saved = page.locator("tr[data-category=run-alerts] p.saved")
    saved.wait_for()
    assert saved.text_content() == "Saved: run-alerts mail is off for rank-desk."
    assert page.evaluate("window.notReloaded") is True
    assert color_of(saved) == "rgb(23, 112, 58)"
    assert may_send(alice.email, "run-alerts", workspace) is False
    page.locator("tr[data-category=product-updates] input[type=checkbox]").uncheck()
    page.locator("tr[data-category=product-updates] p.saved").wait_for()
    assert (
        page.locator("tr[data-category=product-updates] p.saved").text_content()
        == "Saved: product-updates mail is off."
    )
    assert page.locator(".topbar nav a[aria-current=page]").all_text_contents() == ["Notifications"]
    page.screenshot(path=str(artifacts / "profile-notifications.png"), full_page=True)
