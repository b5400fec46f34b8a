"""A task's page that goes, mid-task, to an address its session may not reach: refused by the session's own guard
(its keeper's proxy, on the session's own decision), and the task ends `navigation_blocked` naming the address.

The session is opened by a web process that has not opted in to private addresses, so the session's decision is
"refuse them"; the worker keeping it has opted in (it reaches the loopback model stand-in), so the refusal here
can only come from the session's decision, applied by its keeper to every connection of its browser.
"""

from __future__ import annotations


import pytest

from browsing.actions import wait_ended
from browsing.models import BrowserSession
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.mcp_site import arena
from tests.mcp.conftest import token_for
from tests.mcp.test_tasks_and_reports import SUMMARY, provider_desk  # noqa: F401 - the stand-in as the account's provider

pytestmark = pytest.mark.e2e

REFUSED = (
    "127.0.0.1 resolves to 127.0.0.1: private, loopback, link-local and other non-public addresses cannot be called"
)


@pytest.fixture
def unopted(mcp_platform, settings):
    """The web process of an install that has not opted in: the sessions it opens refuse private addresses."""
    settings.FOLDRUN_PUBLIC_URL = mcp_platform.base
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    return mcp_platform


def link_to(url: str) -> dict:
    """A browse call that writes a link into the session's blank page (the page a task starts on without startUrl)."""
    return {
        "action": "browse",
        "mode": "text",
        "js": f"document.body.innerHTML = '<a id=\"next\" href=\"{url}\">Next</a>'; 'written'",
    }


def follow_a_link_to_another_server(mcp_client, alice, provider_desk, **session) -> tuple:
    """A task that writes a link to another loopback server into its page and clicks it: its result and the link,
    once the other server is known never to have been reached."""
    with arena() as other:
        target = f"{other.url}/pricing/"
        provider_desk.reply_tool_use("web", link_to(target))
        provider_desk.reply_tool_use("web", {"action": "browse", "mode": "text", "actions": [{"click": "#next"}]})
        provider_desk.reply_text("STUCK: the next page did not open")
        with mcp_client(token_for(alice)) as client:
            result = client.call_tool(
                "run_task", {"goal": "Follow the Next link and read the page", "maxSteps": 5, **session}
            )
        assert "/pricing/" not in other.seen  # the browser never reached the other server
    return result, target


def test_a_link_to_loopback_clicked_mid_task_is_refused_by_the_sessions_guard_and_ends_navigation_blocked(
    unopted, mcp_client, alice, provider_desk
):
    result, target = follow_a_link_to_another_server(mcp_client, alice, provider_desk)
    data = result.structured_content
    task = data["task"]
    said = f"browse: {target} was not opened — {REFUSED}"
    assert result.is_error is True
    assert SUMMARY.match(result.content[0].text.splitlines()[0]).groups() == ("stopped", "navigation_blocked", "2")
    assert (task["ok"], task["stoppedBy"], task["reason"]) == (False, "navigation_blocked", said)
    assert f"Reason: {said}" in result.content[0].text
    assert [(s["op"], s["ok"]) for s in task["steps"]] == [("read", True), ("click", False)]
    assert task["steps"][1]["error"] == said
    session = BrowserSession.objects.get(public_id=data["sessionId"])
    assert session.private_addresses is False
    assert wait_ended(session)


def test_a_session_with_allow_hosts_says_the_refused_host_is_not_among_them(unopted, mcp_client, alice, provider_desk):
    # staging.internal is the user's, reached through their proxy; the loopback site is not on the list, so the
    # session's guard refuses it, and the task's sentence names the list it is not on.
    result, target = follow_a_link_to_another_server(
        mcp_client,
        alice,
        provider_desk,
        proxyUrl="http://proxy.example.com:3128",
        allowHosts=["staging.internal", "*.corp.internal"],
    )
    task = result.structured_content["task"]
    said = (
        f"browse: {target} was not opened — {REFUSED}; this session reaches only staging.internal, "
        f"*.corp.internal through its proxy (allowHosts), and 127.0.0.1 is not among them"
    )
    assert result.is_error is True
    assert (task["ok"], task["stoppedBy"], task["reason"]) == (False, "navigation_blocked", said)
    assert task["steps"][1]["error"] == said
