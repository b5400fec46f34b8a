"""`mode=diff` loose ends (spec/tools.md, "The browser, in full"): the `against=` page opens with what the call's
own page gets — its `init` scripts and the block's `storage` where that page is the storage's origin — and a
`diff` in a `session=` runs in the session's context (its cookies), its baseline the same file."""

from __future__ import annotations

import json

import pytest

from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

TOKEN = "tok-zyxwv-0987654321"
BOOT = """<p id="who">-</p><script>document.getElementById('who').textContent =
  localStorage.getItem('user-session') ? 'signed in with ' + localStorage.getItem('user-session') : 'signed out';
</script>"""
INIT = (
    "addEventListener('DOMContentLoaded', () => document.body.insertAdjacentHTML('beforeend', '<p>init ran here</p>'));"
)


def _visit(request: dict):
    if "seen=1" in (request["headers"].get("Cookie") or request["headers"].get("cookie") or ""):
        return html(page("Visit", "<p>returning visitor</p>"))
    status, headers, body = html(page("Visit", "<p>first visit</p>"))
    return status, {**headers, "set-cookie": "seen=1; Path=/"}, body


ROUTES = {
    "/staging": html(page("Pricing", "<h1>Pricing</h1><p>Pro costs 12 a month</p>")),
    "/production": html(page("Pricing", "<h1>Pricing</h1><p>Pro costs 10 a month</p>")),
    "/app": html(page("App", BOOT)),
    "/visit": _visit,
}


def test_the_against_page_runs_the_calls_init_scripts_too(browse, pages_site, tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts/mark.js").write_text(INIT)
    out = browse({"browse": {"init": ["scripts/mark.js"]}}).call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/staging",
            "mode": "diff",
            "against": f"{pages_site.url}/production",
        }
    )
    assert "-Pro costs 10 a month" in out and "+Pro costs 12 a month" in out
    assert "init ran here" not in out  # in both pages, so no difference — it is no line of the diff


def test_the_against_page_gets_the_blocks_storage_when_it_is_the_storage_origin(
    make_tool, browsers, pages_site, recorder
):
    other = f"http://localhost:{pages_site.port}"
    tool = make_tool(
        {"browse": {"storage": "SITE_STORAGE", "storage_origin": other}},
        browsers=browsers,
        secret={"SITE_STORAGE": json.dumps({"localStorage": {"user-session": TOKEN}})}.__getitem__,
    )
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/app", "mode": "diff", "against": f"{other}/app"})
    assert "-signed in with [secret SITE_STORAGE (1)]" in out and "+signed out" in out
    assert TOKEN not in out and TOKEN not in recorder.text()
    assert not any("opens without web.browse.storage" in line for line in recorder.lines)


def test_a_diff_in_a_session_reads_in_the_sessions_context_against_its_baseline(browse, pages_site):
    tool = browse()
    first = tool.call({"action": "browse", "url": f"{pages_site.url}/visit", "mode": "diff", "session": "shop"})
    assert first.startswith(f"first diff read of {pages_site.url}/visit: saved as the baseline")
    second = tool.call({"action": "browse", "url": f"{pages_site.url}/visit", "mode": "diff", "session": "shop"})
    assert "-first visit" in second and "+returning visitor" in second  # the session kept the site's cookie
    third = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/visit",
            "mode": "diff",
            "session": "shop",
            "against": f"{pages_site.url}/staging",
        }
    )
    assert "+returning visitor" in third and "-Pro costs 12 a month" in third
    fresh = tool.call({"action": "browse", "url": f"{pages_site.url}/visit", "mode": "diff"})
    assert "+first visit" in fresh  # outside the session: no cookie, against the same baseline
