"""Touch and a person's pointer: `tap`, `swipe`, `"human": true`, and `"force": true` on a double or right
click — real Chromium against pages this module serves (spec/tools.md, "The browser, in full")."""

from __future__ import annotations

import json
import math

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

_RECORD = """<script>
window.seen = [];
for (const kind of ['touchstart', 'touchmove', 'touchend', 'click', 'dblclick', 'contextmenu', 'mousedown']) {
  document.addEventListener(kind, e => {
    const t = (e.changedTouches && e.changedTouches[0]) || e;
    window.seen.push({kind, x: Math.round(t.clientX), y: Math.round(t.clientY), target: e.target.id || null});
  }, true);
}
window.moves = [];
document.addEventListener('mousemove', e => window.moves.push([e.clientX, e.clientY, performance.now()]), true);
</script>"""

ROUTES = {
    "/touch": html(
        page(
            "Touch",
            '<button id="go" style="margin: 200px; width: 160px; height: 60px" '
            "onclick=\"document.title = 'tapped'\">Go</button>"
            '<div id="pad" style="width: 400px; height: 400px; background: #eee"></div>',
            head=_RECORD,
        )
    ),
    "/covered": html(
        page(
            "Covered",
            '<button id="go" ondblclick="document.title=\'double\'" '
            "oncontextmenu=\"document.title='menu'; return false\">Go</button>"
            '<div id="cover" ondblclick="document.title=\'cover\'" '
            'style="position: fixed; inset: 0; background: #fff">cookies</div>',
        )
    ),
}


def _results(out: str) -> list:
    return json.loads(out[out.index("[") :])


def test_tap_sends_touch_events_to_the_element_and_the_click_they_make(browse, pages_site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/touch",
            "actions": [{"tap": "#go"}, {"get": "title"}, {"eval": "window.seen"}],
        }
    )
    title, seen = _results(out)
    assert title == {"get": "title", "value": "tapped"}
    kinds = [e["kind"] for e in seen["value"] if e["target"] == "go"]
    assert kinds[:2] == ["touchstart", "touchend"] and "click" in kinds


@pytest.mark.parametrize(
    "direction,axis,sign", [("up", "y", -1), ("down", "y", 1), ("left", "x", -1), ("right", "x", 1)]
)
def test_swipe_draws_a_finger_the_way_it_names_on_the_element(browse, pages_site, direction, axis, sign):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/touch",
            "actions": [{"swipe": direction, "selector": "#pad"}, {"eval": "window.seen"}],
        }
    )
    touches = [e for e in _results(out)[0]["value"] if e["kind"].startswith("touch")]
    assert touches[0]["kind"] == "touchstart" and touches[0]["target"] == "pad"
    assert touches[-1]["kind"] == "touchend"
    moves = [e for e in touches if e["kind"] == "touchmove"]
    assert len(moves) >= 5
    assert sign * (moves[-1][axis] - touches[0][axis]) > 100


def test_a_swipe_that_names_no_direction_is_a_sentence(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages_site.url}/touch", "actions": [{"swipe": "sideways"}]})
    assert str(caught.value) == "browse: swipe is one of up, down, left, right; 'sideways' is not"


def test_a_human_click_travels_a_curve_with_pauses_and_lands_inside_the_element(browse, pages_site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/touch",
            "actions": [
                {"click": "#go", "human": True},
                {"get": "title"},
                {"eval": "window.moves"},
                {"get": "#go", "what": "box"},
            ],
        }
    )
    title, moves, box = _results(out)
    assert title["value"] == "tapped"
    path, box = moves["value"], box["value"]
    assert len(path) >= 12  # a plain Playwright click moves once
    (x0, y0, t0), (x1, y1, t1) = path[0], path[-1]
    assert box["x"] < x1 < box["x"] + box["width"] and box["y"] < y1 < box["y"] + box["height"]
    chord = math.hypot(x1 - x0, y1 - y0)
    off_line = max(abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / chord for x, y, _ in path)
    assert off_line > 5  # bowed, not a straight line
    assert t1 - t0 > 100  # it took a person's time
    plain = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/touch",
            "actions": [{"click": "#go"}, {"eval": "window.moves.length"}],
        }
    )
    assert _results(plain)[0]["value"] <= 2


def test_human_changes_nothing_else_about_the_browser(browse, pages_site):
    probe = "[navigator.webdriver, navigator.userAgent, navigator.maxTouchPoints, innerWidth]"
    plain = browse().call({"action": "browse", "url": f"{pages_site.url}/touch", "actions": [{"eval": probe}]})
    human = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/touch",
            "actions": [{"hover": "#go", "human": True}, {"eval": probe}],
        }
    )
    assert _results(plain) == _results(human)


def test_human_on_a_step_with_no_pointer_path_is_refused(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse().call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/touch",
                "actions": [{"fill": "#go", "text": "x", "human": True}],
            }
        )
    assert str(caught.value) == (
        'browse: step 1: "human" moves the pointer on click, dblclick, hover, drag, mouse '
        "(a mouse move); fill takes no pointer path"
    )


def test_force_sends_a_double_and_a_right_click_to_the_element_not_the_cover_over_it(browse, pages_site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/covered",
            "actions": [
                {"dblclick": "#go", "force": True},
                {"get": "title"},
                {"rightclick": "#go", "force": True},
                {"get": "title"},
            ],
        }
    )
    assert [r["value"] for r in json.loads(out)] == ["double", "menu"]
