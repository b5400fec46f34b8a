"""Not collected by the suite: test_browse_pods.py runs it in a pytest session of its own. A test of an account
leaves the account's browser pod running, as a step run in the test's process does, and the session ends."""

from __future__ import annotations

from foldrun.web.browse import servers
from tests.conftest import wait_for


def test_a_step_of_the_account_leaves_its_pod_running(account):
    pool = servers.POOL.account(account.public_id)
    pool.open_step()
    wait_for(lambda: pool.pods[:1])
    pool.close_step()
