"""The file's locks on what the browser may do (spec/tools.md, "What this agent's browser may do"): `deny:`
covers an action by its other names — `eval` a wait on a function and a clipboard read, `goto` a new tab, a
sign-in that opens a URL and a download given a URL — and `allowed_domains:` holds for a page's WebSocket.
Real Chromium against servers this module starts."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from foldrun.web import WebToolError
from tests.conftest import wait_for
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

ROUTES = {
    "/start": html(page("Start", '<p>ready</p><a id="get" href="/notes.txt" download>notes</a>')),
    "/notes.txt": (
        200,
        {"content-type": "text/plain", "content-disposition": "attachment; filename=notes.txt"},
        b"the notes",
    ),
}


def _refused(tool, url: str, steps: list) -> str:
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": url, "actions": steps})
    return str(caught.value)


def test_deny_eval_also_covers_a_wait_on_a_function_and_a_clipboard_read(browse, pages_site):
    tool = browse({"browse": {"deny": ["eval"]}})
    url = f"{pages_site.url}/start"
    assert (
        _refused(tool, url, [{"eval": "1 + 1"}]) == "browse: the action eval is denied to this agent (web.browse.deny)"
    )
    assert _refused(tool, url, [{"wait": "fn", "js": "true"}]) == (
        "browse: a wait on a function is denied to this agent — web.browse.deny names eval, which covers it"
    )
    assert _refused(tool, url, [{"clipboard": "read"}]) == (
        "browse: a clipboard read is denied to this agent — web.browse.deny names eval, which covers it"
    )
    # a clipboard write is not script: it still runs
    assert "ready" in tool.call(
        {"action": "browse", "url": url, "actions": [{"clipboard": "write", "text": "x"}], "mode": "text"}
    )


def test_deny_js_covers_eval_and_its_other_names(browse, pages_site):
    tool = browse({"browse": {"deny": ["js"]}})
    assert _refused(tool, f"{pages_site.url}/start", [{"wait": "fn", "js": "true"}]) == (
        "browse: a wait on a function is denied to this agent — web.browse.deny names js, which covers it"
    )


def test_deny_goto_also_covers_a_new_tab_a_sign_in_that_opens_a_url_and_a_download_given_a_url(browse, pages_site):
    login = json.dumps({"username": "ann", "password": "long-pass-word", "url": f"{pages_site.url}/start"})
    tool = browse({"browse": {"deny": ["goto"]}}, secret={"PORTAL": login}.__getitem__)
    url = f"{pages_site.url}/start"
    assert _refused(tool, url, [{"goto": f"{pages_site.url}/notes.txt"}]) == (
        "browse: the action goto is denied to this agent (web.browse.deny)"
    )
    assert _refused(tool, url, [{"tab": "new", "url": url}]) == (
        "browse: a new tab is denied to this agent — web.browse.deny names goto, which covers it"
    )
    assert _refused(tool, url, [{"login": "PORTAL"}]) == (
        "browse: a sign-in that opens a URL (the secret PORTAL holds one) is denied to this agent — "
        "web.browse.deny names goto, which covers it"
    )
    assert _refused(tool, url, [{"download": f"{pages_site.url}/notes.txt"}]) == (
        "browse: a download given a URL is denied to this agent — web.browse.deny names goto, which covers it"
    )
    # a download from a control on the page is not a navigation the agent named: it still runs
    out = tool.call({"action": "browse", "url": url, "actions": [{"download": "#get"}], "mode": "text"})
    assert out.startswith("download: outputs/notes.txt (9 bytes)")


class Listener:
    """A TCP port that counts who connects — the other host a page's WebSocket aims at."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


@pytest.fixture
def listener():
    made = Listener()
    yield made
    made.sock.close()


def test_allowed_domains_blocks_a_websocket_to_another_host(browse, pages_site, listener, recorder):
    socket_page = page(
        "Socket",
        f'<p>socket</p><script>const ws = new WebSocket("ws://localhost:{listener.port}/");'
        'ws.onerror = ws.onclose = () => { document.title = "socket closed"; };</script>',
    )
    pages_site.routes["/socket"] = html(socket_page)
    steps = [{"wait": "fn", "js": "document.title === 'socket closed'"}]
    locked = browse({"browse": {"allowed_domains": ["127.0.0.1"]}})
    locked.call({"action": "browse", "url": f"{pages_site.url}/socket", "actions": steps})
    assert listener.connections == 0
    assert any(
        line.endswith("refused localhost: localhost is outside this agent's allowed_domains (127.0.0.1)")
        for line in recorder.lines
    )
    # the same page without the lock reaches the port: the refusal above was the lock's
    browse().call({"action": "browse", "url": f"{pages_site.url}/socket", "actions": steps})
    wait_for(lambda: listener.connections > 0)
