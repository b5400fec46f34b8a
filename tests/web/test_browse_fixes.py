"""web action=browse, issue 12's short-of-the-spec fixes: real Chromium against pages this module serves."""

from __future__ import annotations

import json
import time

import pytest

from foldrun.web import WebToolError
from tests.fakes.loopback import LoopbackServer, QuietHandler
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

ROUTES = {
    "/banner": html(
        page(
            "Banner",
            '<button id="go" onclick="document.title=\'clicked\'">Go</button>'
            '<input type="checkbox" id="terms">'
            '<div id="cover" onclick="document.title=\'cover\'" style="position:fixed;'
            'inset:0;background:#fff">cookies</div>',
        )
    ),
    "/api/items": (200, {"content-type": "application/json"}, b'{"items": [1, 2]}'),
    "/late-fetch": html(
        page(
            "Late",
            '<p id="out">waiting</p><script>setTimeout(() => fetch("/api/items")'
            '.then(r => r.json()).then(j => { document.getElementById("out").textContent'
            ' = "got " + j.items.length; }), 400);</script>',
        )
    ),
    "/styled": html(
        page("Styled", '<p id="note" style="color: rgb(255, 0, 0); font-size: 20px; display: block">Hi</p>')
    ),
    "/throws": html(
        page(
            "Throws",
            '<p>x</p><script>console.log("booting"); '
            'setTimeout(() => { throw new Error("kaboom in widget"); }, 0);</script>',
        )
    ),
    "/required-login": html(
        page(
            "Sign in",
            '<form action="/welcome" method="get"><input name="user" '
            'id="user"><input type="password" name="pw" id="pw">'
            '<input name="code" id="code" required>'
            '<button type="submit">Sign in</button></form>',
        )
    ),
    "/welcome": html(page("Welcome", "<p>signed in</p>")),
    # A site that answers a wrong password with its form again, 200, as most do.
    "/login-again": html(
        page(
            "Sign in",
            '<form action="/login-again" method="get"><input name="user" '
            'id="user"><input type="password" name="pw" id="pw">'
            '<p>Sign in to continue</p><button type="submit">Sign in</button></form>',
        )
    ),
    # A site that answers a wrong password with a page of its own: 200, no form, the reason in words (and the
    # password echoed back, as a careless one does).
    "/login-elsewhere": html(
        page(
            "Sign in",
            '<form action="/refused" method="get"><input name="user" id="user">'
            '<input type="password" name="pw" id="pw"><button type="submit">Sign in'
            "</button></form>",
        )
    ),
    "/refused": lambda request: html(
        page(
            "Oops",
            f"<h1>Oops</h1><p>Incorrect password for alice "
            f"({request['path'].rpartition('pw=')[2]}).</p>"
            f'<a href="/login-elsewhere">Try again</a>',
        )
    ),
    # A handler that holds the page for 2.5 s, past the plain click's first try.
    "/slow-handler": html(
        page(
            "Slow",
            '<button id="order" onclick="const t = Date.now(); while (Date.now() - t '
            "< 2500) {} window.orders = (window.orders || 0) + 1; document.title = "
            "'orders ' + window.orders\">Order</button>",
        )
    ),
    "/to-draft": html(
        page(
            "New",
            '<p>x</p><script>setTimeout(() => { throw new Error("late widget"); }, 0);'
            '</script><a id="save" href="/welcome?draft=42">Save</a>',
        )
    ),
}


class CloseDelimited(QuietHandler):
    """HTTP/1.0 with no Content-Length: the body ends when the connection closes, as many 404 pages do."""

    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:  # noqa: N802
        body = b'<img src="/missing.png" alt="x">' if self.path == "/" else b"nothing here at all"
        self.send_response(200 if self.path == "/" else 404)
        self.send_header("content-type", "text/html" if self.path == "/" else "text/plain")
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def close_delimited():
    with LoopbackServer(CloseDelimited) as server:
        yield server.url


def test_network_gives_a_404_its_real_byte_count_never_a_negative_one(browse, close_delimited, tmp_path):
    out = browse().call({"action": "browse", "url": f"{close_delimited}/", "mode": "network"})
    line = next(ln for ln in out.splitlines() if "/missing.png" in ln)
    assert line.startswith(f"404 GET image {close_delimited}/missing.png 19 bytes ")
    saved = json.loads((tmp_path / "outputs/network.json").read_text())["requests"]
    assert [r["bytes"] for r in saved if r["url"].endswith("/missing.png")] == [19]


def test_force_sends_the_click_to_the_element_itself_not_to_the_banner_over_it(browse, pages_site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/banner",
            "actions": [
                {"click": "#go", "force": True},
                {"check": "#terms", "force": True},
                {"get": "title"},
                {"get": "#terms", "what": "checked"},
            ],
        }
    )
    assert json.loads(out) == [{"get": "title", "value": "clicked"}, {"get": "checked of #terms", "value": True}]


def test_a_click_whose_handler_holds_the_page_past_the_first_try_is_pressed_once(browse, pages_site):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/slow-handler",
            "actions": [{"click": "#order"}, {"wait": 300}, {"get": "title"}],
        }
    )
    note, results = out.split("\n\n", 1) if out.startswith("click") else ("", out)
    assert json.loads(results) == [{"get": "title", "value": "orders 1"}]
    # Whether the first try ran out before or after the press reached the page, it is pressed once; after,
    # the note says why there was no second press.
    assert note in ("", "click #order (the page took longer than 1.5 s to handle it; it was not pressed again)")


def test_wait_on_a_response_holds_the_steps_until_the_page_fetched_what_matches(browse, pages_site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/late-fetch",
            "actions": [{"wait": "response", "matches": r"/api/items$"}, {"wait": 100}, {"get": "#out"}],
        }
    )
    assert json.loads(out) == [{"get": "text of #out", "value": "got 2"}]


class SlowBody(QuietHandler):
    """A page whose `load` waits 0.6 s on an image while its fetch's answer has its headers at once and the rest
    of its body 2 s later: that response comes while the page loads and finishes after the load."""

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/":
            body = (
                b'<p id="out">waiting</p><script>fetch("/api/slow").then(r => r.text()).then(t => '
                b'{ document.getElementById("out").textContent = t; });</script><img src="/slow.png" alt="">'
            )
            self._send(200, "text/html", body)
        elif self.path == "/slow.png":
            time.sleep(0.6)
            self._send(200, "image/png", b"")
        else:
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", "8")
            self.end_headers()
            self.wfile.write(b"got")
            self.wfile.flush()
            time.sleep(2)
            self.wfile.write(b" it!")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_wait_on_a_response_that_came_while_the_page_loaded_is_not_waited_for_again(browse):
    with LoopbackServer(SlowBody) as site:
        started = time.monotonic()
        out = browse().call(
            {
                "action": "browse",
                "url": f"{site.url}/",
                "actions": [{"wait": "response", "matches": r"/api/slow$", "timeout": 5000}],
            }
        )
        took = time.monotonic() - started
    assert "wait response" not in out
    assert took < 4.5, took  # it did not wait out its 5 s for a response the page already had


def test_wait_on_a_request_that_never_comes_says_so_and_a_missing_matches_is_named(browse, pages_site):
    tool = browse()
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/late-fetch",
                "actions": [{"wait": "request", "matches": "/never", "timeout": 800}],
            }
        )
    assert "wait request: no request matching /never within 800 ms" in str(caught.value)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/late-fetch", "actions": [{"wait": "response"}]})
    assert 'wait "response" needs "matches", a regular expression for its URL' in str(caught.value)


def test_browser_and_engine_on_one_call_must_agree(browse, pages_site):
    tool = browse()
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/welcome", "browser": "chromium", "engine": "firefox"})
    assert str(caught.value) == (
        "browse sets engine firefox and browser chromium, which disagree — they are one "
        "setting; give either, or both only if they agree"
    )
    out = tool.call(
        {"action": "browse", "url": f"{pages_site.url}/welcome", "browser": "chromium", "engine": "chromium"}
    )
    assert "signed in" in out


def test_the_final_url_is_the_last_stderr_line_even_after_the_pages_own_failures(browse, pages_site, recorder):
    browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/to-draft",
            "actions": [{"wait": 100}, {"click": "#save"}, {"wait": "url", "contains": "draft="}],
        }
    )
    assert any("uncaught error" in line and "late widget" in line for line in recorder.lines)
    assert recorder.lines[-1] == f"{pages_site.url}/welcome?draft=42"


def test_get_styles_answers_the_computed_styles_asked_for_by_props(browse, pages_site):
    out = json.loads(
        browse().call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/styled",
                "actions": [
                    {"get": "#note", "what": "styles", "props": ["color", "font-size"]},
                    {"get": "#note", "what": "styles"},
                ],
            }
        )
    )
    assert out[0] == {"get": "styles of #note", "value": {"color": "rgb(255, 0, 0)", "font-size": "20px"}}
    assert out[1]["value"]["display"] == "block" and out[1]["value"]["color"] == "rgb(255, 0, 0)"
    assert len(out[1]["value"]) == 20


def test_console_mode_includes_the_pages_uncaught_errors_with_level_and_source(browse, pages_site, tmp_path):
    out = browse().call(
        {"action": "browse", "url": f"{pages_site.url}/throws", "mode": "console", "actions": [{"wait": 200}]}
    )
    lines = out.splitlines()
    assert f"[log] booting ({pages_site.url}/throws)" in lines
    assert f"[error] uncaught Error: kaboom in widget ({pages_site.url}/throws)" in lines
    saved = json.loads((tmp_path / "outputs/console.json").read_text())
    assert [m["level"] for m in saved if m.get("uncaught")] == ["error"]


def test_login_never_says_signed_in_when_the_site_shows_its_sign_in_form_again(browse, pages_site):
    tool = browse(secret={"PORTAL_LOGIN": "alice:not-the-password"}.__getitem__)
    out = tool.call(
        {"action": "browse", "url": f"{pages_site.url}/login-again", "actions": [{"login": "PORTAL_LOGIN"}]}
    )
    assert out.splitlines()[0] == (
        "login: the site did not sign in from the secret PORTAL_LOGIN — its sign-in "
        "form is still on the page after the submit"
    )
    assert "signed in from the secret" not in out


def test_login_never_says_signed_in_when_the_site_answers_a_wrong_password_with_a_page_saying_so(browse, pages_site):
    tool = browse(secret={"PORTAL_LOGIN": "alice:not-the-password"}.__getitem__)
    out = tool.call(
        {"action": "browse", "url": f"{pages_site.url}/login-elsewhere", "actions": [{"login": "PORTAL_LOGIN"}]}
    )
    assert out.splitlines()[0] == (
        "login: the site did not sign in from the secret PORTAL_LOGIN — the page says "
        '"Incorrect password for alice ([secret PORTAL_LOGIN])."'
    )
    assert "not-the-password" not in out and "signed in from the secret" not in out


def test_login_says_the_submit_was_blocked_when_the_forms_own_validation_refused_it(browse, pages_site):
    tool = browse(secret={"PORTAL_LOGIN": json.dumps({"username": "alice", "password": "pa55-w0rd-long"})}.__getitem__)
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {"action": "browse", "url": f"{pages_site.url}/required-login", "actions": [{"login": "PORTAL_LOGIN"}]}
        )
    assert str(caught.value).startswith("browse: login: the form's own validation blocked the submit — code: ")
    assert str(caught.value).endswith(
        "; the secret PORTAL_LOGIN filled the user name and password and the form asks for more, so nobody signed in"
    )
    assert "signed in from the secret" not in str(caught.value)
