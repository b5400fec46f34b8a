"""mode=screenshot annotate=true: a numbered box on every element that can be acted on, the list under the
picture, the numbers usable as "@e4" in the next call — real Chromium against pages this file serves."""

from __future__ import annotations

import json
import re

import pytest

from foldrun.web import WebToolError
from tests.fakes.png import pixel, rows_of
from tests.fakes.website import TestSite, html

pytestmark = pytest.mark.e2e

MAGENTA = (0xE0, 0x21, 0x8A)

# An icon button with no name, drawn at a known place; two buttons named "Pay", one inside the form.
_CART = """<!doctype html><html lang="en"><head><title>Cart</title><style>body {margin: 0} main {padding: 0}
#icon {position: absolute; left: 100px; top: 100px; width: 40px; height: 40px; border: 0; background: #ccc}
</style></head><body><main><h1>Cart</h1>
<button id="icon" onclick="document.title = 'icon clicked'"><svg width="16" height="16"></svg></button>
<div style="position: absolute; top: 200px"><button onclick="document.title = 'outside'">Pay</button>
<form id="checkout" onsubmit="return false"><input aria-label="Card" name="card">
<button onclick="document.title = 'inside'">Pay</button></form>
<a href="/done">Done</a><span hidden><button>Ghost</button></span></div></main></body></html>"""


@pytest.fixture(scope="module")
def pages():
    with TestSite({"/cart": html(_CART.encode())}) as server:
        yield server


def _numbers(out: str) -> dict[str, str]:
    """'@e5 button "Pay"' lines → {'button "Pay"…': 'e5'} (the first of a name wins)."""
    found: dict[str, str] = {}
    for line in out.splitlines():
        match = re.match(r"^@(e\d+) (.+)$", line)
        if match:
            found.setdefault(match.group(2), match.group(1))
    return found


def test_an_annotated_screenshot_boxes_and_lists_every_element_that_can_be_acted_on(browse, pages, tmp_path):
    tool = browse()
    out = tool.call({"action": "browse", "url": f"{pages.url}/cart", "mode": "screenshot", "annotate": True})
    head, _, listed = out.partition("\n\n")
    assert re.fullmatch(
        r"outputs/page\.png — the full page at \d+px wide, 5 elements that can be acted on boxed "
        r"and numbered\. Read outputs/page\.png to see it\.",
        head,
    )
    lines = listed.splitlines()
    assert lines[0] == 'The numbers, for a step such as {"click": "@e4"}:'
    assert [re.sub(r"^@e\d+ ", "", line) for line in lines[1:]] == [
        "button",
        'button "Pay"',
        'textbox "Card"',
        'button "Pay"',
        'link "Done" -> /done',
    ]
    assert "Ghost" not in out  # hidden: not numbered as something to act on
    # the icon button's box is drawn on its edges, the button itself shows through
    _w, _h, rows = rows_of(tmp_path / "outputs/page.png")
    assert pixel(rows, 100, 120) == MAGENTA and pixel(rows, 139, 120) == MAGENTA
    assert pixel(rows, 120, 120) == (0xCC, 0xCC, 0xCC)


def test_a_number_from_the_picture_clicks_that_element_in_the_next_call(browse, pages):
    tool = browse()
    out = tool.call({"action": "browse", "url": f"{pages.url}/cart", "mode": "screenshot", "annotate": True})
    icon = _numbers(out)["button"]
    clicked = tool.call(
        {"action": "browse", "url": f"{pages.url}/cart", "actions": [{"click": f"@{icon}"}, {"get": "title"}]}
    )
    assert clicked.startswith(f"@{icon} = button (1 of 1)\n\n")
    assert json.loads(clicked.split("\n\n", 1)[1]) == [{"get": "title", "value": "icon clicked"}]


def test_within_numbers_one_part_and_its_number_is_found_there_again(browse, pages):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages.url}/cart",
            "mode": "screenshot",
            "annotate": True,
            "within": "form#checkout",
        }
    )
    assert "2 elements that can be acted on boxed and numbered within form#checkout." in out
    pay = _numbers(out)['button "Pay"']
    clicked = tool.call(
        {"action": "browse", "url": f"{pages.url}/cart", "actions": [{"click": f"@{pay}"}, {"get": "title"}]}
    )
    assert json.loads(clicked.split("\n\n", 1)[1]) == [{"get": "title", "value": "inside"}]


@pytest.mark.parametrize(
    "call, said",
    [
        ({"mode": "text", "annotate": True}, "browse: annotate= goes with mode=screenshot; this call reads mode=text"),
        (
            {"mode": "screenshot", "within": "form"},
            "browse: within= goes with mode=aria or an annotated screenshot "
            "(mode=screenshot annotate=true); this screenshot is not annotated",
        ),
    ],
)
def test_annotate_out_of_place_is_refused_before_a_browser_opens(browse, browsers, pages, call, said):
    launches = browsers.launches
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages.url}/cart", **call})
    assert str(caught.value) == said
    assert browsers.launches == launches


def test_the_screenshot_step_annotates_too_and_its_numbers_work_in_the_next_call(browse, pages, tmp_path):
    tool = browse()
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages.url}/cart",
            "mode": "text",
            "actions": [{"screenshot": "cart", "annotate": True, "full": False}],
        }
    )
    assert out.startswith(
        "screenshot: outputs/cart.png — 5 elements that can be acted on boxed and numbered. Read "
        "outputs/cart.png to see it.\n\nThe numbers, for a step such as"
    )
    _w, _h, rows = rows_of(tmp_path / "outputs/cart.png")
    assert pixel(rows, 100, 120) == MAGENTA
    icon = _numbers(out)["button"]
    clicked = tool.call(
        {"action": "browse", "url": f"{pages.url}/cart", "actions": [{"click": f"@{icon}"}, {"get": "title"}]}
    )
    assert json.loads(clicked.split("\n\n", 1)[1]) == [{"get": "title", "value": "icon clicked"}]
