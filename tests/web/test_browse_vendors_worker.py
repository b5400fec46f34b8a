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
    "/who": html(
        b"<html><head><title>Who</title></head><body><main><p id=ua></p></main>"
        b"<script>document.getElementById('ua').textContent = 'seen by ' + "
        b"(navigator.userAgent.includes('HeadlessChrome') ? 'the vendor browser' : 'the own browser')"
        b"</script></body></html>"
    ),
}


def test_a_run_on_a_worker_browses_on_steel_with_the_vaults_key_and_releases_the_session(
    transactional_db, tmp_path, workspace, alice, fake_provider
):
    from vault.actions import do_set_secret

    with (
        LocalChromium() as chromium,
        CdpRelay(chromium) as relay,
        BrowserVendor("steel", relay) as steel,
        TestSite(ROUTES) as site,
    ):
        do_set_secret(workspace.account, None, "STEEL_API_KEY", value=steel.key)
        web = "web:\n  browse:\n    via: steel\n    vendor_session:\n      captcha: true\n"
        push(
            workspace,
            {
                "agents/reader/agent.md": agent_file(
                    "reader", fake_provider, tools="[web]", extra="secrets: [STEEL_API_KEY]\n" + web
                )
            },
        )
        fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/who", "mode": "text"})
        fake_provider.reply_text("GOOD — read it on steel")
        worker = start_worker(tmp_path / "worker.log", {"FOLDRUN_WEB_ENDPOINTS": json.dumps({"steel": steel.url})})
        try:
            run = check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the page.")
            done = wait_for(
                lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=120
            )
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


def test_a_kept_profile_a_run_signed_in_stays_signed_in_when_the_workspace_rewrites_its_keep_file(
    transactional_db, tmp_path, workspace, alice, fake_provider
):
    from browsing.models import KeptSeed
    from library.actions.run_files import do_write_run_files
    from library.services import files_at
    from vault.actions import do_set_secret

    with (
        LocalChromium() as chromium,
        CdpRelay(chromium) as relay,
        BrowserVendor("browserbase", relay) as browserbase,
        TestSite(ROUTES) as site,
    ):
        do_set_secret(workspace.account, None, "BROWSERBASE_API_KEY", value=browserbase.key)
        do_set_secret(workspace.account, None, "PORTAL_COOKIES", value="sid=portal-sid-5150")
        web = "web:\n  browse:\n    via: browserbase\n    vendor_session:\n      keep: client-portal\n"
        push(
            workspace,
            {
                "agents/reader/agent.md": agent_file(
                    "reader",
                    fake_provider,
                    tools="[web]",
                    extra="secrets: [BROWSERBASE_API_KEY, PORTAL_COOKIES]\n" + web,
                )
            },
        )
        fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/who", "cookies": "PORTAL_COOKIES"})
        fake_provider.reply_text("GOOD — signed in")
        fake_provider.reply_tool_use(
            "web",
            {"action": "browse", "url": f"{site.url}/who", "actions": [{"get": "localstorage", "key": "session"}]},
        )
        fake_provider.reply_text("GOOD — read it")
        worker = start_worker(
            tmp_path / "worker.log", {"FOLDRUN_WEB_ENDPOINTS": json.dumps({"browserbase": browserbase.url})}
        )
        try:
            first = check_start_run(workspace=workspace, user=alice, agent="reader", task="Sign in.")
            wait_for(lambda: Run.objects.filter(pk=first.pk, status__in=["completed", "failed"]).first(), timeout=120)
            (path,) = [p for p in files_at(workspace.account, workspace) if p.endswith("web-browse/client-portal.json")]
            kept = json.loads(files_at(workspace.account, workspace)[path].content)
            # What a script tool with state writes may do: the file as it likes, with no mark of any kind.
            do_write_run_files(
                first.public_id,
                account=workspace.account,
                workspace=workspace,
                files={path: json.dumps({"vendor": "browserbase", "context": "ctx_made_up"})},
            )
            second = check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it.")
            done = wait_for(
                lambda: Run.objects.filter(pk=second.pk, status__in=["completed", "failed"]).first(), timeout=120
            )
        finally:
            stop_worker(worker)
    (result,) = [e.data["content"] for e in TraceEvent.objects.filter(run=done, kind="tool_result")]
    assert kept == {"vendor": "browserbase", "context": browserbase.made[0]}
    assert list(KeptSeed.objects.filter(workspace=workspace).values_list("kept_id", "seeded", "secrets")) == [
        (browserbase.made[0], "cookies", ["BROWSERBASE_API_KEY", "PORTAL_COOKIES"])
    ]
    assert "browse: a get of localstorage is refused where a secret seeded the session" in result
