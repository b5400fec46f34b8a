"""mode=diff with visual=true compares pixels (the share changed, the rectangle, outputs/diff.png in red on a faded
copy), and against= compares with another page now — real Chromium against pages this file serves."""

from __future__ import annotations

import pytest

from foldrun.web import WebToolError
from tests.fakes.png import pixel, rows_of
from tests.fakes.website import TestSite, html

pytestmark = pytest.mark.e2e

VIEWPORT = [400, 300]  # small, so a page is one screen and its picture is read back quickly


def _board(colour: str, words: str = "Prices") -> bytes:
    """A white page: a black bar that never changes, and a 200×50 box whose colour does."""
    return (
        f'<!doctype html><html lang="en"><head><title>Board</title><style>html, body {{margin: 0; height: 300px; '
        f"background: #fff; overflow: hidden}} div {{position: absolute}}</style></head><body>"
        f'<div style="left: 300px; top: 200px; width: 50px; height: 20px; background: #000"></div>'
        f'<div id="box" style="left: 40px; top: 100px; width: 200px; height: 50px; background: {colour}"></div>'
        f'<p style="position: absolute; left: 0; top: 250px; margin: 0; color: #fff">{words}</p>'
        f"</body></html>"
    ).encode()


@pytest.fixture(scope="module")
def pages():
    colour = {"now": "#00f"}
    server = TestSite(
        {
            "/board": lambda request: html(_board(colour["now"])),
            "/staging": html(_board("#00f", "Pro costs $12 a month")),
            "/production": html(_board("#0f0", "Pro costs $9 a month")),
        }
    )
    server.colour = colour
    with server:
        yield server


def test_a_visual_diff_saves_a_picture_then_gives_the_share_and_rectangle_changed_and_draws_them(
    browse, pages, tmp_path
):
    tool = browse()
    call = {
        "action": "browse",
        "url": f"{pages.url}/board",
        "mode": "diff",
        "visual": True,
        "actions": [{"viewport": VIEWPORT}],
    }
    pages.colour["now"] = "#00f"
    first = tool.call(call)
    assert first.startswith(
        f"first visual diff read of {pages.url}/board: saved as the baseline (400px wide, state/browser/diff/"
    )
    assert first.endswith(".png); the next visual diff read compares with it")
    same = tool.call(call)
    assert same == (
        f"no pixel changed since the last visual diff read of {pages.url}/board (400×300); "
        f"outputs/diff.png is the page, faded"
    )
    pages.colour["now"] = "#0f0"
    changed = tool.call(call)
    assert changed == (
        f"8.33% of the pixels changed since the last visual diff read of {pages.url}/board "
        f"(10,000 of 120,000), within the rectangle x=40 y=100 w=200 h=50; outputs/diff.png shows the "
        f"changes in red on a faded copy of the page as it is now. Read outputs/diff.png to see it."
    )
    width, height, rows = rows_of(tmp_path / "outputs/diff.png")
    assert (width, height) == (400, 300)
    assert pixel(rows, 140, 125) == (255, 0, 0)  # inside the box: changed, in red
    assert pixel(rows, 10, 10) == (255, 255, 255)  # white stays white
    grey = pixel(rows, 325, 210)  # the black bar, unchanged: faded to a light grey
    assert all(190 <= c <= 192 for c in grey)


def test_against_compares_with_another_page_now_as_markdown(browse, pages):
    out = browse().call(
        {"action": "browse", "url": f"{pages.url}/production", "mode": "diff", "against": f"{pages.url}/staging"}
    )
    assert out.splitlines()[:2] == [f"--- {pages.url}/staging", f"+++ {pages.url}/production"]
    assert "-Pro costs $12 a month" in out.splitlines() and "+Pro costs $9 a month" in out.splitlines()


def test_against_with_visual_compares_the_two_pages_as_pictures(browse, pages, tmp_path):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages.url}/production",
            "mode": "diff",
            "visual": True,
            "against": f"{pages.url}/staging",
            "actions": [{"viewport": VIEWPORT}],
        }
    )
    # the box alone: the words that differ are white on white, so no pixel of them shows
    assert out.startswith(
        f"8.33% of the pixels changed from {pages.url}/staging to {pages.url}/production (10,000 of "
        f"120,000), within the rectangle x=40 y=100 w=200 h=50; "
    )
    assert (tmp_path / "outputs/diff.png").is_file()
    _w, _h, rows = rows_of(tmp_path / "outputs/diff.png")
    assert pixel(rows, 140, 125) == (255, 0, 0)


def test_against_a_host_outside_allowed_domains_is_refused_by_name_before_a_browser_opens(browse, browsers, pages):
    other = pages.url.replace("127.0.0.1", "localhost")
    launches = browsers.launches
    with pytest.raises(WebToolError) as caught:
        browse({"browse": {"allowed_domains": ["127.0.0.1"]}}).call(
            {"action": "browse", "url": f"{pages.url}/production", "mode": "diff", "against": f"{other}/staging"}
        )
    assert str(caught.value) == (
        f"browse: against={other}/staging was not opened — localhost is outside this "
        f"agent's allowed_domains (127.0.0.1)"
    )
    assert browsers.launches == launches


@pytest.mark.parametrize(
    "call, said",
    [
        ({"mode": "text", "visual": True}, "browse: visual= goes with mode=diff; this call reads mode=text"),
        (
            {"mode": "markdown", "against": "https://example.com/"},
            "browse: against= goes with mode=diff; this call reads mode=markdown",
        ),
        (
            {"mode": "diff", "against": "staging"},
            "browse: against= is the URL of another page to compare this one with, "
            "such as https://staging.example.com/pricing",
        ),
        ({"mode": "diff", "visual": "yes"}, 'browse: visual= is true or false, not "yes"'),
    ],
)
def test_the_diff_options_are_refused_before_a_browser_opens(browse, browsers, pages, call, said):
    launches = browsers.launches
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages.url}/board", **call})
    assert str(caught.value) == said
    assert browsers.launches == launches
