"""web action=browse: real Chromium (one launch for the module) against a loopback site."""

from __future__ import annotations

import json

import pytest

from foldrun.web import WebToolError
from foldrun.web.browse import BrowserPool

pytestmark = pytest.mark.e2e


def test_it_reads_the_page_a_script_builds_which_fetch_cannot(browse, site):
    tool = browse()
    fetched = tool.call({"action": "fetch", "url": f"{site.url}/app", "mode": "text"})
    assert "builds itself with JavaScript" in fetched
    out = tool.call({"action": "browse", "url": f"{site.url}/app", "mode": "text"})
    assert out == "Rendered listings\nHarbour flat\n02 9999 0000details\nGarden cottage\n02 8888 0000details"


def test_markdown_keeps_structure_and_lands_in_outputs(browse, site, tmp_path):
    out = browse().call({"action": "browse", "url": f"{site.url}/app", "mode": "markdown"})
    assert out.startswith("# Rendered listings\n\n- ### Harbour flat\n  02 9999 0000[details](")
    assert f"[details]({site.url}/flats/1)" in out
    assert (tmp_path / "outputs/page.md").read_text() == out


def test_it_fills_selects_checks_and_clicks_then_answers_with_what_get_asked(browse, site, tmp_path):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "actions": json.dumps(
                [
                    {"fill": "#name", "text": "Alice"},
                    {"select": "#plan", "value": "Pro"},
                    {"check": "#terms"},
                    {"click": "#go"},
                    {"expect": "#out", "text": "Thanks Alice"},
                    {"get": "#out"},
                    {"get": "title"},
                ]
            ),
        }
    )
    assert json.loads(out.split("\n\n", 1)[1]) == [
        {"get": "text of #out", "value": "Thanks Alice (pro) agreed"},
        {"get": "title", "value": "Sign up"},
    ]
    assert json.loads((tmp_path / "outputs/results.json").read_text())[0]["value"] == "Thanks Alice (pro) agreed"


def test_press_scroll_wait_and_eval(browse, site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "mode": "text",
            "actions": [
                {"fill": "label=Name", "text": "Bob"},
                {"press": "#name", "key": "Enter"},
                {"wait": "text", "text": "Thanks Bob"},
                {"scroll": "bottom"},
                {"wait": 50},
                {"eval": "Math.round(window.scrollY) > 1000"},
                {"eval": "localStorage.getItem('signed')"},
            ],
        }
    )
    assert "Thanks Bob (free)" in out
    assert out.endswith(
        'Results:\n[\n {\n  "eval": "Math.round(window.scrollY) > 1000",\n  "value": true\n },\n'
        ' {\n  "eval": "localStorage.getItem(\'signed\')",\n  "value": "yes"\n }\n]'
    )


def test_a_wrong_expect_fails_the_call_and_stops_the_rest(browse, site):
    with pytest.raises(WebToolError) as caught:
        browse().call(
            {
                "action": "browse",
                "url": f"{site.url}/form",
                "actions": [
                    {"expect": "title", "equals": "Checkout"},
                    {"click": "#go"},
                ],
            }
        )
    assert str(caught.value) == (
        "browse: expect failed at step 1: title is 'Sign up', not 'Checkout'; the steps after it did not run"
    )


def test_if_branches_on_a_claim(browse, site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "actions": [
                {
                    "if": "#cookie-banner",
                    "then": [{"click": "#cookie-banner"}],
                    "else": [{"fill": "#name", "text": "Eve"}],
                },
                {"get": "#name", "what": "value"},
            ],
        }
    )
    assert json.loads(out) == [{"get": "value of #name", "value": "Eve"}]


def test_aria_numbers_every_element_and_a_later_call_acts_on_the_number(browse, site, tmp_path):
    tool = browse()
    snapshot = tool.call({"action": "browse", "url": f"{site.url}/buttons?n=2", "mode": "aria"})
    refs = json.loads((tmp_path / "outputs/.browser/refs.json").read_text())["default"]["refs"]
    second = next(
        ref for ref, entry in refs.items() if entry == {"role": "button", "name": "Delete", "nth": 1, "of": 2}
    )
    assert f'button "Delete" [ref={second}]' in snapshot
    out = tool.call(
        {"action": "browse", "url": f"{site.url}/buttons?n=2", "actions": [{"click": f"@{second}"}], "mode": "text"}
    )
    assert out.startswith(f'@{second} = button "Delete" (2 of 2)\n\n')
    title = tool.call(
        {"action": "browse", "url": f"{site.url}/buttons?n=2", "actions": [{"click": f"@{second}"}, {"get": "title"}]}
    )
    assert json.loads(title.split("\n\n", 1)[1]) == [{"get": "title", "value": "deleted 2"}]


def test_interactive_aria_lists_only_what_can_be_acted_on(browse, site):
    out = browse().call({"action": "browse", "url": f"{site.url}/buttons?n=2", "mode": "aria", "interactive": True})
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith('button "Delete" [ref=')
    assert lines[2].startswith('link "Checkout" [ref=') and lines[2].endswith("-> /checkout")


def test_a_number_is_refused_when_the_page_now_has_a_different_count(browse, site):
    tool = browse()
    tool.call({"action": "browse", "url": f"{site.url}/buttons?n=2", "mode": "aria"})
    refs = json.loads((tool.sandbox / "outputs/.browser/refs.json").read_text())["default"]["refs"]
    first = next(ref for ref, entry in refs.items() if entry["name"] == "Delete")
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/buttons?n=3", "actions": [{"click": f"@{first}"}]})
    assert str(caught.value) == (
        f'@{first} was button "Delete" (1 of 2), and the page now has 3 of them — read the '
        f"page with mode=aria again and use the new numbers"
    )


def test_a_number_read_on_another_page_is_refused(browse, site):
    tool = browse()
    tool.call({"action": "browse", "url": f"{site.url}/buttons", "mode": "aria"})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/form", "actions": [{"click": "@e3"}]})
    assert str(caught.value) == (
        f"@e3 was read on {site.url}/buttons, not on this page ({site.url}/form) — read this "
        f"page with mode=aria first and use its numbers"
    )


def test_a_screenshot_is_a_png_in_outputs_and_the_output_says_how_to_see_it(browse, site, tmp_path):
    out = browse().call({"action": "browse", "url": f"{site.url}/form", "mode": "screenshot"})
    assert out == "outputs/page.png — the full page at 1366px wide. Read outputs/page.png to see it."
    assert (tmp_path / "outputs/page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pdf_and_a_screenshot_step(browse, site, tmp_path):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "mode": "pdf",
            "actions": [{"screenshot": "form-top", "full": False}],
        }
    )
    assert out == "screenshot: outputs/form-top.png\n\noutputs/page.pdf — the page printed to PDF."
    assert (tmp_path / "outputs/page.pdf").read_bytes()[:5] == b"%PDF-"
    assert (tmp_path / "outputs/form-top.png").read_bytes()[:4] == b"\x89PNG"


def test_links_table_and_extract(browse, site, tmp_path):
    tool = browse()
    links = tool.call({"action": "browse", "url": f"{site.url}/app", "mode": "links"})
    assert links == f"- [details]({site.url}/flats/1)\n- [details]({site.url}/flats/2)"
    table = json.loads(tool.call({"action": "browse", "url": f"{site.url}/article", "mode": "table"}))
    assert table == [{"heading": "What to bring", "rows": [{"Day": "Weekday", "Notice": "7 days"}]}]
    rows = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/app",
            "actions": [{"extract": ".listing", "fields": {"name": "h3", "phone": ".tel", "url": "a@href"}}],
        }
    )
    assert json.loads(rows)[0]["rows"][1] == {
        "name": "Garden cottage",
        "phone": "02 8888 0000",
        "url": f"{site.url}/flats/2",
    }
    assert json.loads((tmp_path / "outputs/extracted.json").read_text())[0]["name"] == "Harbour flat"


def test_the_locale_is_the_agents_language_or_the_calls(browse, site):
    tool = browse(language="en", region="au")
    assert json.loads(
        tool.call({"action": "browse", "url": f"{site.url}/form", "actions": [{"eval": "navigator.language"}]})
    ) == [{"eval": "navigator.language", "value": "en-AU"}]
    out = tool.call(
        {"action": "browse", "url": f"{site.url}/form", "locale": "de-DE", "actions": [{"eval": "navigator.language"}]}
    )
    assert json.loads(out)[0]["value"] == "de-DE"


def test_a_session_holds_a_login_for_the_rest_of_the_run(browse, site, tmp_path):
    tool = browse()
    tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/login",
            "session": "portal",
            "actions": [
                {"fill": "input[name=user]", "text": "alice"},
                {"click": "text=Sign in"},
                {"wait": "url", "contains": "/account"},
            ],
        }
    )
    assert tool.call({"action": "browse", "url": f"{site.url}/account", "session": "portal"}) == "signed in as alice"
    assert tool.call({"action": "browse", "url": f"{site.url}/account"}) == "signed out"
    saved = json.loads((tmp_path / "outputs/.browser/portal/state.json").read_text())
    assert saved["cookies"][0]["name"] == "sid"


def test_state_carries_a_login_to_the_next_run(browse, site, tmp_path):
    browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/login",
            "state": "portal",
            "actions": [{"click": "text=Sign in"}, {"wait": "url", "contains": "/account"}],
        }
    )
    assert (tmp_path / "state/browser/portal.json").is_file()
    next_run = browse()
    assert next_run.call({"action": "browse", "url": f"{site.url}/account", "state": "portal"}) == "signed in as alice"


def test_a_test_run_opens_no_browser_and_says_so(make_tool, site, recorder):
    pool = BrowserPool()
    tool = make_tool(test_mode=True, browsers=pool)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/form"})
    sentence = (
        "test run: web action=browse was not run — a test run is handed no browser pod, and outward calls fail closed"
    )
    assert str(caught.value) == sentence
    assert sentence in recorder.lines
    assert pool.launches == 0


def test_loopback_is_refused_before_a_browser_opens_unless_the_install_allows_private(make_tool, site):
    pool = BrowserPool()
    tool = make_tool(allow_private=False, browsers=pool)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/form"})
    assert str(caught.value) == (
        f"browse: {site.url}/form was not opened — 127.0.0.1 resolves to 127.0.0.1: "
        f"private, loopback, link-local and other non-public addresses cannot be called"
    )
    assert pool.launches == 0


def test_allowed_domains_is_a_lock_a_call_cannot_widen(browse, site):
    tool = browse({"browse": {"allowed_domains": ["portal.example.com"]}})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/form"})
    assert str(caught.value) == (
        f"browse: {site.url}/form was not opened — 127.0.0.1 is outside this agent's "
        f"allowed_domains (portal.example.com)"
    )
    with pytest.raises(WebToolError, match="allowed_domains= may only narrow the agent's list; 127.0.0.1 is outside"):
        tool.call({"action": "browse", "url": f"{site.url}/form", "allowed_domains": ["127.0.0.1"]})


def test_a_denied_action_is_refused(browse, site):
    with pytest.raises(WebToolError) as caught:
        browse({"browse": {"deny": ["click"]}}).call(
            {"action": "browse", "url": f"{site.url}/form", "actions": [{"click": "#go"}]}
        )
    assert str(caught.value) == "browse: the action click is denied to this agent (web.browse.deny)"


def test_a_page_error_is_a_line_on_the_run_log_and_an_empty_page_comes_with_its_reason(browse, site, recorder):
    out = browse().call({"action": "browse", "url": f"{site.url}/broken"})
    assert out == "the page is empty — uncaught error: boom in the page"
    assert f"browse {site.url}/broken: uncaught error: boom in the page" in recorder.lines


def test_what_is_not_built_is_refused_by_name(browse, site):
    tool = browse()
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/form", "browser": "firefox"})
    assert str(caught.value) == (
        "browse: this runner image was built without firefox; it has chromium (and chrome, which runs as Chromium here)"
    )


def test_a_browse_that_clicks_is_a_write_and_one_that_only_looks_is_a_read(browse):
    tool = browse()
    assert tool.writes({"action": "browse", "url": "u", "actions": '[{"click": "#go"}]'}) is True
    assert (
        tool.writes({"action": "browse", "url": "u", "actions": [{"if": "#x", "then": [{"fill": "#a", "text": "b"}]}]})
        is True
    )
    assert tool.writes({"action": "browse", "url": "u", "actions": [{"scroll": "bottom"}, {"wait": 100}]}) is False
    assert tool.limit_keys({"action": "browse"}) == ["web", "web.browse"]


def test_the_browser_is_launched_once_for_many_calls(browse, browsers, site):
    tool = browse()
    tool.call({"action": "browse", "url": f"{site.url}/form"})
    launches = browsers.launches
    for _ in range(3):
        tool.call({"action": "browse", "url": f"{site.url}/form"})
    assert browsers.launches == launches


def test_a_field_filled_from_a_secret_never_shows_its_value_and_the_call_runs_no_script(browse, site, tmp_path):
    secrets = {"PORTAL_PASSWORD": "hunter2-correct-horse"}
    tool = browse(secret=secrets.__getitem__)
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "mode": "text",
            "actions": [{"fill": "#name", "secret": "PORTAL_PASSWORD"}, {"click": "#go"}],
        }
    )
    assert "Thanks [secret PORTAL_PASSWORD] (free)" in out
    assert "hunter2" not in out
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{site.url}/form",
                "actions": [
                    {"fill": "#name", "secret": "PORTAL_PASSWORD"},
                    {"eval": "document.getElementById('name').value"},
                ],
            }
        )
    assert str(caught.value) == (
        "browse: eval does not run in a call that fills a secret — script could read the "
        "field; sign in with session= and read in the next call"
    )


def test_cookies_from_a_secret_sign_the_page_in_and_js_is_refused_beside_them(browse, site):
    tool = browse(secret={"SITE_COOKIES": "sid=abc123; uid=7"}.__getitem__)
    out = tool.call({"action": "browse", "url": f"{site.url}/account", "cookies": "SITE_COOKIES"})
    assert out == "signed in as alice"
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {"action": "browse", "url": f"{site.url}/account", "cookies": "SITE_COOKIES", "js": "document.cookie"}
        )
    assert str(caught.value) == (
        "browse: js does not run in a call that carries cookies from a secret — document.cookie is one expression away"
    )


def test_a_cookie_default_opens_signed_out_on_another_site(browse, site, recorder):
    tool = browse(
        {"browse": {"cookies": "SITE_COOKIES", "cookie_domain": "portal.example.com"}},
        secret={"SITE_COOKIES": "sid=abc123"}.__getitem__,
    )
    assert tool.call({"action": "browse", "url": f"{site.url}/account"}) == "signed out"
    assert (
        "browse: 127.0.0.1 is not portal.example.com, so the page opens signed out (web.browse.cookies belongs to "
        "portal.example.com)"
    ) in recorder.lines


def test_headers_fill_a_secret_and_refuse_a_cookie_header(browse, site, recorder):
    tool = browse(secret={"TEAM_TOKEN": "team-token-424242"}.__getitem__)
    out = tool.call({"action": "browse", "url": f"{site.url}/echo-headers", "headers": '{"X-Team": "${TEAM_TOKEN}"}'})
    assert "team [secret TEAM_TOKEN]" in out
    assert "team-token-424242" not in recorder.text()
    with pytest.raises(WebToolError, match="a cookie header is refused"):
        tool.call({"action": "browse", "url": f"{site.url}/echo-headers", "headers": {"Cookie": "a=b"}})


def test_block_drops_images_and_network_lists_every_request(browse, site):
    tool = browse()
    out = tool.call({"action": "browse", "url": f"{site.url}/pictures", "mode": "network"})
    assert out.startswith(f"200 {site.url}/pictures (text/html; charset=utf-8)\n")
    assert f"200 GET image {site.url}/png 264 bytes" in out
    blocked = tool.call({"action": "browse", "url": f"{site.url}/pictures", "mode": "network", "block": "image"})
    assert "GET image" not in blocked


def test_console_mode_returns_every_console_message(browse, site, tmp_path):
    out = browse().call({"action": "browse", "url": f"{site.url}/article", "mode": "console"})
    assert f"[log] analytics ({site.url}/article)" in out.splitlines()
    # Chromium may log a failed favicon load before the page's own line: find it, don't assume it is first.
    saved = json.loads((tmp_path / "outputs/console.json").read_text())
    assert [m["level"] for m in saved if "analytics" in m.get("text", "")] == ["log"]


def test_device_timezone_and_identity(browse, site):
    tool = browse(
        {
            "browse": {
                "identities": {"au-mobile": {"device": "Pixel 7", "locale": "en-AU", "timezone": "Australia/Sydney"}}
            }
        }
    )
    out = json.loads(
        tool.call(
            {
                "action": "browse",
                "url": f"{site.url}/form",
                "identity": "au-mobile",
                "actions": [
                    {
                        "eval": "[screen.width, navigator.userAgent.includes('Pixel 7'), navigator.language, "
                        "Intl.DateTimeFormat().resolvedOptions().timeZone]"
                    }
                ],
            }
        )
    )
    assert out[0]["value"] == [412, True, "en-AU", "Australia/Sydney"]
    with pytest.raises(
        WebToolError, match="identity=us-desktop is not in web.browse.identities; the identities are au-mobile"
    ):
        tool.call({"action": "browse", "url": f"{site.url}/form", "identity": "us-desktop"})


def test_dialogs_are_dismissed_unless_accepted_with_text(browse, site):
    tool = browse()
    steps = [{"click": "text=Ask"}, {"get": "#r"}]
    assert (
        json.loads(tool.call({"action": "browse", "url": f"{site.url}/dialog", "actions": steps}))[0]["value"] == "null"
    )
    out = tool.call(
        {"action": "browse", "url": f"{site.url}/dialog", "actions": steps, "dialogs": "accept", "dialog_text": "Alice"}
    )
    assert json.loads(out)[0]["value"] == "Alice"


def test_expect_claims_are_each_reported_and_any_failure_fails_the_call(browse, site):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "mode": "text",
            "actions": [{"fill": "#name", "text": "Ann"}, {"click": "#go"}],
            "expect": [{"expect": "#out", "text": "Thanks Ann"}, {"expect": "url", "contains": "/form"}],
        }
    )
    assert out.startswith(
        'expect ✓ {"expect": "#out", "text": "Thanks Ann"}\nexpect ✓ {"expect": "url", "contains": "/form"}\n\n'
    )
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{site.url}/form",
                "actions": [{"click": "#go"}],
                "expect": [{"expect": "title", "equals": "Sign up"}, {"expect": "#out", "text": "Thanks Zed"}],
            }
        )
    assert str(caught.value) == (
        'browse: expect ✓ {"expect": "title", "equals": "Sign up"}\n'
        'expect ✗ {"expect": "#out", "text": "Thanks Zed"} — #out reads \'Thanks (free)\', without \'Thanks Zed\''
    )


def test_confirm_proves_a_write_stuck_and_says_when_it_did_not(browse, site):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/draft",
            "confirm": "text=Draft saved",
            "actions": [{"fill": "input[name=t]", "text": "hello"}, {"click": "text=Save"}, {"wait": "load"}],
        }
    )
    assert out.startswith("confirm ✓ text=Draft saved after a reload\n\nDraft saved")
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{site.url}/fake-save",
                "confirm": "text=Draft saved",
                "actions": [{"click": "text=Save"}],
            }
        )
    assert str(caught.value) == (
        "browse: confirm=text=Draft saved is not on the page after a reload — the change did "
        "not stick. Do not retry: a refused write is a session or a permission, not a flake"
    )


def test_cookie_and_localstorage_steps(browse, site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "actions": [
                {"localstorage": "theme", "value": "dark"},
                {"get": "localstorage", "key": "theme"},
                {"cookie": "sid", "value": "abc123"},
                {"goto": f"{site.url}/account"},
                {"get": "body"},
            ],
        }
    )
    assert json.loads(out) == [
        {"get": "localstorage", "value": "dark"},
        {"get": "text of body", "value": "signed in as alice"},
    ]


def test_when_the_pointer_cannot_reach_an_element_the_keyboard_does_and_the_result_says_so(browse, site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/covered",
            "actions": [
                # the pointer's first try is 1.5 s whatever the step allows; 2 s leaves the fallback room on a loaded machine
                # (with 500 ms a busy renderer could outlast the element's read before the keyboard, and the step failed)
                {"click": "#go", "timeout": 2000},
                {"check": "#terms", "timeout": 2000},
                {"get": "#r"},
                {"get": "#terms", "what": "checked"},
            ],
        }
    )
    notes, results = out.split("\n\n", 1)
    assert notes == (
        "click #go (by keyboard (Enter) — the pointer could not reach it)\n"
        "check #terms (by keyboard (Space) — the pointer could not reach it)"
    )
    assert json.loads(results) == [
        {"get": "text of #r", "value": "clicked"},
        {"get": "checked of #terms", "value": True},
    ]


def test_a_file_that_is_not_a_page_says_so(browse, site):
    out = browse().call({"action": "browse", "url": f"{site.url}/report.pdf"})
    assert (
        out
        == "the page is empty — it is application/pdf, not a page — fetch it with mode=raw and save= to keep the bytes"
    )


def test_a_missing_browser_says_how_to_install_one(make_tool, site, monkeypatch):
    monkeypatch.setenv("FOLDRUN_CHROMIUM", "/nowhere/chromium")
    with pytest.raises(WebToolError) as caught:
        make_tool().call({"action": "browse", "url": f"{site.url}/form"})
    assert str(caught.value) == (
        "browse: no browser at /nowhere/chromium. Install Chromium (`apt-get install -y "
        "chromium` on a worker), or on a laptop `npm i -g playwright@1.63.0` then `npx "
        "playwright install chromium`; FOLDRUN_CHROMIUM names another binary"
    )


def test_login_signs_in_from_a_credential_secret_the_model_never_sees(browse, site):
    credential = json.dumps({"username": "alice", "password": "pa55-w0rd-long", "url": f"{site.url}/signin"})
    tool = browse(secret={"PORTAL_LOGIN": credential}.__getitem__)
    out = tool.call(
        {"action": "browse", "url": f"{site.url}/form", "session": "portal", "actions": [{"login": "PORTAL_LOGIN"}]}
    )
    assert out == "login: signed in from the secret PORTAL_LOGIN\n\nsigned in as alice"
    assert tool.writes({"action": "browse", "url": "u", "actions": [{"login": "PORTAL_LOGIN"}]}) is True


def test_login_refuses_a_form_on_another_origin_and_redacts_an_echoed_password(browse, site):
    elsewhere = json.dumps({"username": "alice", "password": "pa55-w0rd-long", "url": "https://portal.example.com/"})
    tool = browse(
        {"browse": {"allowed_domains": ["127.0.0.1", "portal.example.com"]}},
        secret={"OTHER": elsewhere, "WRONG": "alice:wrong-password-9"}.__getitem__,
    )
    with pytest.raises(WebToolError, match="portal.example.com"):
        tool.call({"action": "browse", "url": f"{site.url}/signin", "actions": [{"login": "OTHER"}]})
    out = tool.call({"action": "browse", "url": f"{site.url}/signin", "actions": [{"login": "WRONG"}]})
    assert out == (
        "login: the site did not sign in from the secret WRONG — it answered the sign-in with 403"
        "\n\nwrong password [secret WRONG]"
    )


def test_upload_hands_a_workspace_file_to_a_file_picker(browse, site, tmp_path):
    (tmp_path / "outputs").mkdir(exist_ok=True)
    (tmp_path / "outputs" / "cv.txt").write_text("twelve bytes")
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/upload",
            "actions": [{"upload": "#f", "file": "outputs/cv.txt"}, {"get": "#n"}],
        }
    )
    assert json.loads(out) == [{"get": "text of #n", "value": "cv.txt 12"}]


def test_download_saves_under_outputs(browse, site, tmp_path):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/downloads",
            "mode": "text",
            "actions": [{"download": "#get", "to": "report.pdf"}],
        }
    )
    assert out.startswith("download: outputs/report.pdf (15 bytes)\n\n")
    assert (tmp_path / "outputs/report.pdf").read_bytes() == b"%PDF-1.4\n%%EOF\n"


def test_mock_answers_for_the_server(browse, site):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/items",
            "actions": [
                {"mock": "**/api/items", "json": ["stubbed one", "stubbed two"]},
                {"reload": True},
                {"wait": "#list li"},
            ],
            "mode": "text",
        }
    )
    assert out == "stubbed one\nstubbed two"
    routed = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/items",
            "mode": "text",
            "wait_for": "#list li",
            "routes": [{"mock": "**/api/items", "json": ["from routes"]}],
        }
    )
    assert routed == "from routes"


def test_a_redirect_hop_is_checked_when_its_connection_is_made(browse, site):
    tool = browse({"browse": {"allowed_domains": ["127.0.0.1"]}})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{site.url}/away?to=http://localhost:{site.port}/article"})
    assert str(caught.value) == (
        f"browse: {site.url}/away?to=http://localhost:{site.port}/article was not opened "
        f"(redirected to http://localhost:{site.port}/article) — localhost is outside this "
        f"agent's allowed_domains (127.0.0.1)"
    )
    assert tool.call({"action": "browse", "url": f"{site.url}/hop"}).startswith("Home")


def test_the_guard_proxy_refuses_loopback_for_plain_http_and_tunnels(site):
    import socket

    from foldrun.web.net import GuardProxy, checked_addresses

    proxy = GuardProxy(checked_addresses)
    try:
        with socket.create_connection(("127.0.0.1", proxy.port)) as conn:
            conn.sendall(f"GET {site.url}/article HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            answer = conn.recv(4096).decode()
        assert answer.startswith("HTTP/1.1 403 Forbidden")
        assert answer.endswith(
            "refused by foldrun: 127.0.0.1 resolves to 127.0.0.1: private, loopback, "
            "link-local and other non-public addresses cannot be called"
        )
        with socket.create_connection(("127.0.0.1", proxy.port)) as conn:
            conn.sendall(b"CONNECT 169.254.169.254:443 HTTP/1.1\r\nHost: 169.254.169.254:443\r\n\r\n")
            assert conn.recv(4096).decode().startswith("HTTP/1.1 403 Forbidden")
        assert [host for host, _ in proxy.refusals] == ["127.0.0.1", "169.254.169.254"]
    finally:
        proxy.close()


def test_a_selector_missing_from_the_page_is_found_in_its_frames_and_frame_scopes_the_steps(browse, site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/frames",
            "actions": [{"click": "#inner"}, {"frame": "iframe"}, {"get": "#inner"}, {"frame": ""}, {"get": "title"}],
        }
    )
    assert json.loads(out) == [{"get": "text of #inner", "value": "pressed"}, {"get": "title", "value": "Outer"}]


def test_tab_follows_a_link_that_opened_one_and_new_opens_another(browse, site):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/frames",
            "actions": [
                {"click": "#pop"},
                {"tab": "last"},
                {"get": "title"},
                {"tab": "new", "url": f"{site.url}/form", "label": "form"},
                {"get": "title"},
                {"tab": 0},
                {"get": "title"},
            ],
        }
    )
    assert [r["value"] for r in json.loads(out)] == ["Owner inspections", "Sign up", "Outer"]


def test_paste_drag_and_pushstate(browse, site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{site.url}/editor",
            "actions": [
                {"paste": "#ed", "html": "<h2>Title</h2><ul><li><a href='/x'>one</a></li></ul>"},
                {"get": "#ed", "what": "html"},
                {"drag": "#a", "to": "#b"},
                {"get": "#b"},
                {"pushstate": "/editor/step-2"},
                {"get": "#route"},
                {"get": "url"},
            ],
        }
    )
    notes, results = out.split("\n\n", 1)
    assert notes == "paste into #ed (inserted as HTML)"
    values = [r["value"] for r in json.loads(results)]
    assert values[0].startswith('<h2>Title</h2><ul><li><a href="/x">one</a></li></ul>')
    assert values[1:] == ["dropped a", "/editor/step-2", f"{site.url}/editor/step-2"]


def test_capture_keeps_the_json_a_page_fetched_for_itself(browse, site, tmp_path):
    site.pages["/api/items"] = (200, {"content-type": "application/json"}, b'["harbour", "garden"]')
    out = browse().call({"action": "browse", "url": f"{site.url}/items", "mode": "capture", "capture": "**/api/*"})
    assert out == (
        f"capture: 1 response saved under outputs/captures/\n\n"
        f'=== {site.url}/api/items (200, outputs/captures/001-api-items.json) ===\n["harbour", "garden"]'
    )
    assert (tmp_path / "outputs/captures/001-api-items.json").read_bytes() == b'["harbour", "garden"]'


def test_diff_saves_a_baseline_then_shows_what_changed(browse, site, tmp_path):
    from tests.web.fakes import html

    tool = browse()
    site.pages["/news"] = html("<html><body><main><h1>News</h1><p>one</p></main></body></html>")
    first = tool.call({"action": "browse", "url": f"{site.url}/news", "mode": "diff"})
    assert first.startswith(f"first diff read of {site.url}/news: saved as the baseline (3 lines, state/browser/diff/")
    assert tool.call({"action": "browse", "url": f"{site.url}/news", "mode": "diff"}) == (
        f"no change since the last diff read of {site.url}/news"
    )
    site.pages["/news"] = html("<html><body><main><h1>News</h1><p>one</p><p>two</p></main></body></html>")
    changed = tool.call({"action": "browse", "url": f"{site.url}/news", "mode": "diff"})
    assert changed == "--- before\n+++ now\n@@ -2,2 +2,4 @@\n \n one\n+\n+two"


def test_feed_finds_the_linked_feed_and_lists_its_items(browse, site, tmp_path):
    out = browse().call({"action": "browse", "url": f"{site.url}/article", "mode": "feed"})
    assert out == (
        f"feed: {site.url}/feed.xml (2 items)\n- Inspections change — Mon, 30 Nov 2026 09:00:00 GMT\n"
        f"  https://example.com/a\n- Notice periods\n  https://example.com/b"
    )
    saved = json.loads((tmp_path / "outputs/feed.json").read_text())
    assert saved["items"][0]["summary"] == "From January."


def test_a_session_outlives_its_browser_closing_by_its_saved_storage(browse, browsers, site):
    tool = browse()
    tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/login",
            "session": "portal",
            "actions": [{"click": "text=Sign in"}, {"wait": "url", "contains": "/account"}],
        }
    )
    launches = browsers.launches
    browsers.close()  # as when it idles out
    assert tool.call({"action": "browse", "url": f"{site.url}/account", "session": "portal"}) == "signed in as alice"
    assert browsers.launches == launches + 1


def test_two_tools_in_one_thread_share_its_browser_and_the_last_out_closes_it(make_tool, site, browsers):
    browsers.close()  # the module's browser gives way: one driver per thread
    first, second = make_tool(), make_tool()
    first.call({"action": "browse", "url": f"{site.url}/form"})
    second.call({"action": "browse", "url": f"{site.url}/form"})
    pool = first.browsers
    assert pool is second.browsers and pool.launches == 1 and pool.users == 2
    first.close()
    assert pool.alive() and pool._browser is not None
    second.close()
    assert pool._browser is None


def test_the_guard_proxy_tunnels_what_its_policy_allows(site):
    import socket

    from foldrun.web.net import GuardProxy

    proxy = GuardProxy(lambda host, port: [host])
    try:
        with socket.create_connection(("127.0.0.1", proxy.port)) as conn:
            conn.sendall(f"CONNECT 127.0.0.1:{site.port} HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n\r\n".encode())
            assert conn.recv(4096) == b"HTTP/1.1 200 Connection Established\r\n\r\n"
            conn.sendall(b"GET /json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 OK")
        assert answer.endswith(b'{"items": [1, 2, 3]}')
    finally:
        proxy.close()


def test_state_key_seals_the_saved_login_and_an_encrypted_state_without_it_is_refused(browse, site, tmp_path):
    keys = {"BROWSER_STATE_KEY": "a long random passphrase 0123"}
    tool = browse({"browse": {"state_key": "BROWSER_STATE_KEY"}}, secret=keys.__getitem__)
    tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/login",
            "state": "vault",
            "actions": [{"click": "text=Sign in"}, {"wait": "url", "contains": "/account"}],
        }
    )
    sealed = (tmp_path / "state/browser/vault.json").read_text()
    assert json.loads(sealed)["alg"] == "AES-256-GCM"
    assert "abc123" not in sealed
    assert tool.call({"action": "browse", "url": f"{site.url}/account", "state": "vault"}) == "signed in as alice"
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{site.url}/account", "state": "vault"})
    assert str(caught.value) == (
        "browse: the state vault is encrypted; name its state_key — an encrypted login is never started signed out"
    )


def test_auth_answers_a_basic_challenge_from_a_secret(browse, site):
    tool = browse(secret={"OPS_BASIC": "ops:s3cret-basic"}.__getitem__)
    assert tool.call({"action": "browse", "url": f"{site.url}/basic", "auth": "OPS_BASIC"}) == "inside"
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{site.url}/basic"})
    assert str(caught.value) == (
        f"browse: {site.url}/basic asks for HTTP basic auth; pass auth=, the NAME of a secret holding user:pass"
    )


def test_trace_and_har_keep_what_happened_but_never_for_a_call_that_signs_in(browse, site, tmp_path):
    tool = browse(secret={"PORTAL_PASSWORD": "pa55-w0rd-long"}.__getitem__)
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/form",
            "trace": "true",
            "har": "outputs/form.har",
            "actions": [{"click": "#go"}],
        }
    )
    assert out.startswith("trace: outputs/trace.zip — open it at trace.playwright.dev\nhar: outputs/form.har\n\n")
    assert (tmp_path / "outputs/trace.zip").read_bytes()[:2] == b"PK"
    assert (
        json.loads((tmp_path / "outputs/form.har").read_text())["log"]["entries"][0]["request"]["url"]
        == f"{site.url}/form"
    )
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{site.url}/form",
                "har": "true",
                "actions": [{"fill": "#name", "secret": "PORTAL_PASSWORD"}],
            }
        )
    assert str(caught.value) == (
        "browse: a call that signs in keeps no har — a trace keeps every field's value, a HAR "
        "every request body; sign in with session= and record the next call"
    )


def test_a_call_stops_at_its_deadline_however_the_page_behaves(browse, site):
    with pytest.raises(WebToolError) as caught:
        browse().call(
            {
                "action": "browse",
                "url": f"{site.url}/form",
                "timeout": 2,
                "actions": [{"fill": "#name", "text": "Ann"}, {"wait": "text", "text": "never", "timeout": 60000}],
            }
        )
    assert str(caught.value) == (
        'browse: the call stopped at its 2-second deadline, at step 2 (wait "text") — pass '
        "timeout= (at most 600) for a longer one"
    )


def test_a_timeout_outside_one_to_600_seconds_is_refused_naming_it(browse, site):
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{site.url}/form", "timeout": 0})
    assert str(caught.value) == "browse: timeout=0 is outside 1 to 600 seconds"
