"""A browser session's `allowHosts` in its task's browse calls: a host on the list is the session's guard's and the
user's own proxy's to reach (only the proxy's address is checked), so the call does not refuse it by its own address
check; a host off the list is refused as always, the sentence saying it is not among them.

The session's Chromium here resolves staging.internal to the loopback site itself (`--host-resolver-rules`),
standing in for the keeper's guard handing that host to the user's proxy, which knows where it is.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from foldrun.web.errors import WebToolError
from tests.fakes.cdp_chromium import cdp_chromium


@pytest.fixture
def staging_session(tmp_path):
    with cdp_chromium(tmp_path, "--host-resolver-rules=MAP staging.internal 127.0.0.1") as endpoint:
        yield endpoint


def test_a_host_on_the_sessions_allow_hosts_is_opened_and_one_off_it_is_refused_naming_the_list(
    make_tool, site, staging_session
):
    staging = f"http://staging.internal:{urlsplit(site.url).port}/article"
    tool = make_tool({}, session_cdp=staging_session, allow_private=False, session_allow_hosts=["staging.internal"])
    assert "Owner inspections" in tool.call({"action": "browse", "url": staging, "mode": "text"})
    with pytest.raises(WebToolError) as refused:
        tool.call({"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    assert str(refused.value).startswith(
        f"browse: {site.url}/article was not opened — 127.0.0.1 resolves to 127.0.0.1: private"
    )
    assert str(refused.value).endswith(
        "; this session reaches only staging.internal through its proxy (allowHosts), and 127.0.0.1 is not among them"
    )


def test_without_allow_hosts_the_same_host_is_refused_by_the_calls_own_check(make_tool, site, staging_session):
    staging = f"http://staging.internal:{urlsplit(site.url).port}/article"
    tool = make_tool({}, session_cdp=staging_session, allow_private=False)
    with pytest.raises(WebToolError) as refused:
        tool.call({"action": "browse", "url": staging, "mode": "text"})
    assert str(refused.value).startswith(f"browse: {staging} was not opened — staging.internal")
