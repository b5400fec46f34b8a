"""`ignore_https_errors` is a browse call argument as tools.md lists it ("`true` opens a page whose certificate does
not check out"), not only a setting of the agent's file. Real Chromium, an HTTPS page on loopback whose
certificate no browser trusts (tests/fakes/tls.py)."""

from __future__ import annotations

import pytest

from foldrun.web import WebToolError
from tests.web.test_browse_proxy import tls_site  # noqa: F401 - the HTTPS page, shared rather than copied

pytestmark = pytest.mark.e2e


def test_the_tool_offers_ignore_https_errors_to_the_model_as_a_boolean(make_tool):
    prop = make_tool().schema()["input_schema"]["properties"]["ignore_https_errors"]
    assert prop == {"type": "boolean", "description": "browse: true opens a page whose certificate does not check out."}


def test_a_page_whose_certificate_does_not_check_out_opens_with_the_call_argument(make_tool, browsers, tls_site):  # noqa: F811
    tool = make_tool(browsers=browsers)
    with pytest.raises(WebToolError) as refused:
        tool.call({"action": "browse", "url": f"https://{tls_site}/"})
    assert "ERR_CERT" in str(refused.value)
    out = tool.call({"action": "browse", "url": f"https://{tls_site}/", "ignore_https_errors": True})
    assert "sealed over TLS" in out


def test_a_call_that_sends_ignore_https_errors_false_keeps_the_check(make_tool, browsers, tls_site):  # noqa: F811
    with pytest.raises(WebToolError) as refused:
        make_tool(browsers=browsers).call(
            {"action": "browse", "url": f"https://{tls_site}/", "ignore_https_errors": False}
        )
    assert "ERR_CERT" in str(refused.value)
