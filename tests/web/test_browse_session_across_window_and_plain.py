"""A named `session` used by calls on browsers of two kinds — one with a window (an identity with `headless: false`)
and the usual one, in either order. The spec's `session` carries the login across the run's calls ("cookies and
logins persist across calls in the run"; on the pods it is the context's storage state, saved between calls), and
nothing says a window changes that: so the next call on the other kind of browser is signed in as the last left
it, rather than failing on a context that lives in another browser's thread. In the step (the CLI) and through a
real run on a real worker, on the account's plain and windowed pods, with real Chromium.
"""

from __future__ import annotations

import os

import pytest

from runs.actions import check_start_run
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.fakes import html
from tests.web.test_browse_worker import finished, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(os.environ.get("DISPLAY")), reason="this machine has a screen")]

SIGN_IN = (
    "<html><body><p id=who></p><script>document.cookie = 'who=ann; max-age=600'; "
    "localStorage.setItem('who', 'ann'); document.getElementById('who').textContent = 'signed in as ann'"
    "</script></body></html>"
)
# Which kind of browser read the page: the screen's width, Xvfb's 1920 for a browser with a window, the viewport's
# 1366 for a headless one. Not outerWidth: a new window that is not mapped yet when the script runs reads 0×0.
WHO = (
    "<html><body><p id=who></p><script>document.getElementById('who').textContent = 'cookie ' + "
    "(document.cookie || 'none') + ', storage ' + (localStorage.getItem('who') || 'none') + ', window ' + "
    "(screen.width >= 1900 ? 'yes' : 'no')</script></body></html>"
)
IDENTITIES = {"window": {"headless": False}}
WINDOWED_IDENTITY = "web:\n  browse:\n    identities:\n      window: {headless: false}\n"


@pytest.fixture
def pages(site):
    site.pages["/sign-in"] = html(SIGN_IN)
    site.pages["/who"] = html(WHO)
    return site


def call(pages, path: str, identity: str | None) -> dict:
    return {
        "action": "browse",
        "url": f"{pages.url}{path}",
        "mode": "text",
        "session": "portal",
        **({"identity": identity} if identity else {}),
    }


@pytest.mark.parametrize(
    "first,then", [("window", None), (None, "window")], ids=["window-then-plain", "plain-then-window"]
)
def test_in_the_step_a_session_signed_in_on_one_kind_of_browser_is_signed_in_on_the_other_and_back(
    make_tool, pages, first, then
):
    tool = make_tool({"browse": {"identities": IDENTITIES}})
    assert "signed in as ann" in tool.call(call(pages, "/sign-in", first))
    other = tool.call(call(pages, "/who", then))
    back = tool.call(call(pages, "/who", first))
    assert "cookie who=ann, storage ann" in other and "cookie who=ann, storage ann" in back
    assert f"window {'yes' if then else 'no'}" in other and f"window {'yes' if first else 'no'}" in back


def test_on_a_worker_a_session_moves_between_the_windowed_pod_and_the_plain_one_signed_in(
    celery_worker_process, workspace, alice, fake_provider, pages
):  # noqa: F811
    push(
        workspace,
        {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]", extra=WINDOWED_IDENTITY)},
    )
    for path, identity in (("/sign-in", "window"), ("/who", None), ("/who", "window"), ("/who", None)):
        fake_provider.reply_tool_use("web", call(pages, path, identity))
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Sign in, then look."))
    signed, plain, windowed, plain_again = tool_results(done)
    assert done.status == "completed", done.error
    assert "signed in as ann" in signed
    assert "cookie who=ann, storage ann, window no" in plain
    assert "cookie who=ann, storage ann, window yes" in windowed
    assert "cookie who=ann, storage ann, window no" in plain_again
