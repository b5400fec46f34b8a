"""A Tool Test browse goes where a run's does — the account's own browser pod, through the guard — and the next
Tool Test finds that pod and its browser still there: no new server, no new browser, the context made in the gap
between the two. Another account's Tool Test browses on a pod of its own."""

from __future__ import annotations

import pytest

from foldrun.web.browse import servers
from tests.web.fakes import Site

pytestmark = pytest.mark.e2e

TEST = "/api/workspaces/rank-desk/tools/web/test"


@pytest.fixture
def site():
    with Site() as server:
        yield server


def browse(api, url: str, ws: str = "rank-desk") -> dict:
    answer = api.post(
        f"/api/workspaces/{ws}/tools/web/test",
        {"arguments": {"action": "browse", "url": url, "mode": "aria"}},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["ok"] is True, body
    return body


def test_a_second_tool_test_browse_finds_the_accounts_pod_and_browser_the_first_left(
    alice_api, account, workspace, site
):
    try:
        browse(alice_api, f"{site.url}/app")
        pool = servers.POOL.accounts[account.public_id]
        kept, pods = pool.browsers, list(pool.pods)
        launches = kept.launches
        assert kept.holds(launches) and len(pods) == 1 and pods[0].alive()
        second = browse(alice_api, f"{site.url}/app")
        assert '- heading "Rendered listings" [level=1]' in second["result"]
        assert pool.browsers is kept and kept.launches == launches and kept.holds(launches)
        assert pool.pods == pods and pool.steps == 0  # no step of the account holds it now; the reaper may go
    finally:
        stopped = servers.POOL.accounts.pop(account.public_id, None)
        if stopped is not None:
            stopped.stop()


def test_charlies_tool_test_browses_on_a_pod_of_his_own_accounts(
    alice_api, charlie_api, charlie, account, workspace, site
):
    from accounts.models import Workspace

    theirs = charlie.memberships.get().account
    Workspace.objects.create(account=theirs, name="rank-desk")
    try:
        browse(alice_api, f"{site.url}/app")
        browse(charlie_api, f"{site.url}/app")
        mine, other = servers.POOL.accounts[account.public_id], servers.POOL.accounts[theirs.public_id]
        assert mine.browsers is not other.browsers
        assert {p.ws for p in mine.pods}.isdisjoint({p.ws for p in other.pods})
        assert {p.process.pid for p in mine.pods}.isdisjoint({p.process.pid for p in other.pods})
    finally:
        for name in (account.public_id, theirs.public_id):
            stopped = servers.POOL.accounts.pop(name, None)
            if stopped is not None:
                stopped.stop()
