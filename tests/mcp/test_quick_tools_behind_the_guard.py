"""The session's own guard refuses what the web process let through: a keeper on a worker that has not opted in
to private addresses (production's default), so the refusal comes from the browser's guard proxy, not the check
made before the session opened."""

from __future__ import annotations

import pytest

from browsing.models import BrowserSession, SessionStatus
from tests.conftest import start_worker, stop_worker
from tests.fakes.mcp_site import arena

from .conftest import token_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def guarded_keeper(transactional_db, tmp_path):
    process = start_worker(tmp_path / "worker.log", {"FOLDRUN_TEST_ALLOW_PRIVATE_URLS": "0"})
    yield process
    stop_worker(process)


def test_an_address_the_session_guard_refuses_is_navigation_blocked_and_the_session_is_stopped(
    guarded_keeper, mcp_client, alice, account
):
    with arena() as site, mcp_client(token_for(alice)) as client:
        url = site.url + "/pricing/"
        said = (
            f"[navigation_blocked] {url} was not opened: 127.0.0.1 resolves to 127.0.0.1: private, loopback, "
            f"link-local and other non-public addresses cannot be called."
        )
        for name, args in (("scrape", {"url": url}), ("crawl", {"url": url, "delayMs": 0})):
            result = client.call_tool(name, args)
            assert result.is_error is True
            assert result.structured_content["error"]["code"] == "navigation_blocked"
            assert result.content[0].text == said
        assert site.seen.count("/pricing/") == 0  # the browser never reached the site
    sessions = BrowserSession.objects.filter(account=account)
    assert sessions.count() == 2  # one each, both stopped when the call ended
    assert {s.status for s in sessions} == {SessionStatus.CLOSED}


def test_a_refused_url_with_a_password_in_it_is_shown_without_the_password(guarded_keeper, mcp_client, alice):
    with arena() as site, mcp_client(token_for(alice)) as client:
        host_and_path = site.url.split("://", 1)[1] + "/pricing/"
        result = client.call_tool("scrape", {"url": f"http://ann:hunter2-secret@{host_and_path}"})
        assert result.structured_content["error"]["code"] == "navigation_blocked"
        assert result.content[0].text.startswith(f"[navigation_blocked] http://{host_and_path} was not opened: ")
        assert "hunter2-secret" not in str(result.structured_content) + result.content[0].text
