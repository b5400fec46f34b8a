"""`via: steel` through a real run on a real Celery worker: the key from the account's vault, the session opened
on a loopback stand-in of Steel's API, the page read on the local Chromium it hands back, the session released
when the call ends, and the live view on the run's log."""
from __future__ import annotations

import json

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import start_worker, stop_worker, wait_for
from tests.fakes.browser_vendors import BrowserVendor, CdpRelay, LocalChromium
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.website import TestSite, html
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e

ROUTES = {
    "/who": html(b"<html><head><title>Who</title></head><body><main><p id=ua></p></main>"
                 b"<script>document.getElementById('ua').textContent = 'seen by ' + "
                 b"(navigator.userAgent.includes('HeadlessChrome') ? 'the vendor browser' : 'the own browser')"
                 b"</script></body></html>"),
}


def test_a_run_on_a_worker_browses_on_steel_with_the_vaults_key_and_releases_the_session(
        transactional_db, tmp_path, workspace, alice, fake_provider):
    from vault.actions import do_set_secret

    with LocalChromium() as chromium, CdpRelay(chromium) as relay, BrowserVendor("steel", relay) as steel, \
            TestSite(ROUTES) as site:
        do_set_secret(workspace.account, None, "STEEL_API_KEY", value=steel.key)
        web = "web:\n  browse:\n    via: steel\n    vendor_session:\n      captcha: true\n"
        push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]",
                                                              extra="secrets: [STEEL_API_KEY]\n" + web)})
        fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/who", "mode": "text"})
        fake_provider.reply_text("GOOD — read it on steel")
        worker = start_worker(tmp_path / "worker.log", {"FOLDRUN_WEB_ENDPOINTS": json.dumps({"steel": steel.url})})
        try:
            run = check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the page.")
            done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(),
                            timeout=120)
        finally:
            stop_worker(worker)
    results = [e.data["content"] for e in TraceEvent.objects.filter(run=done, kind="tool_result").order_by("pk")]
    lines = [e.data["message"] for e in TraceEvent.objects.filter(run=done, kind="log").order_by("pk")]
    assert done.status == "completed", done.error
    assert "seen by the vendor browser" in results[0]
    (session_id,) = steel.sessions
    assert steel.posted("/v1/sessions") == [{"solveCaptcha": True}]
    assert steel.sessions[session_id]["status"] == "released"
    assert f"live view: https://app.steel.dev/sessions/{session_id}" in lines
    assert relay.handshakes[0]["query"]["apiKey"] == steel.key
    everything = json.dumps([e.data for e in TraceEvent.objects.filter(run=done)])
    assert steel.key not in everything
