"""The smoke test's console check covers the whole run, through /mcp on a real worker and real Chromium.

The session's keeper listens to the console of every page for the session's life and keeps what it hears on the
session's record; the report's console section is that, so an error the page logs while the agent is thinking
(no check and no browse call looking at the page) still fails the console check.
"""

from __future__ import annotations

import pytest

from browsing.models import BrowserSession
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.mcp.test_tasks_and_reports import live, provider_desk, site, text_of  # noqa: F401

pytestmark = pytest.mark.e2e


def test_an_error_logged_while_the_agent_thinks_fails_the_console_check(live, provider_desk, site):
    # The page logs its error 2 s after it loads; the agent answers the one step after 4 s, without browsing.
    provider_desk.reply_text("DONE: the page is open", delay=4)
    result = live.call_tool(
        "smoke_test",
        {"url": f"{site.url}/late-console-error", "steps": ["look at the page"], "maxLinks": 0, "waitSeconds": 90},
    )
    report = result.structured_content
    console = next(s for s in report["steps"] if s["kind"] == "console")
    assert result.is_error is False and report["verdict"] == "fail", text_of(result)
    assert [s["status"] for s in report["steps"] if s["kind"] == "step"] == ["passed"]
    assert console["status"] == "failed"
    assert console["error"] == "1 console error: The late widget failed"
    assert report["consoleErrors"] == [
        {"level": "error", "text": "The late widget failed", "url": f"{site.url}/late-console-error"}
    ]
    assert "console error" in text_of(result).splitlines()[0]
    session = BrowserSession.objects.get(public_id=report["sessionId"])
    assert session.console_log == report["consoleErrors"]


def test_a_page_with_a_console_error_and_an_uncaught_one_reports_both_once(live, site):
    result = live.call_tool("smoke_test", {"url": f"{site.url}/console-error", "maxLinks": 0})
    texts = [e["text"] for e in result.structured_content["consoleErrors"]]
    assert texts == ["Widget failed to load", "uncaught: The widget crashed"]
