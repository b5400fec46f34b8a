"""mode=aria's four cuts — within, depth, compact, delta — on real Chromium against pages this module serves
(spec/tools.md, "Numbered elements")."""

from __future__ import annotations

import json
import re

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

ROUTES = {
    "/two-forms": html(
        page(
            "Forms",
            '<form id="billing"><p>Billing</p><button type="button" '
            "onclick=\"document.title='billing saved'\">Save</button></form>"
            '<form id="shipping"><p>Shipping</p><button type="button" '
            "onclick=\"document.title='shipping saved'\">Save</button></form>",
        )
    ),
    "/nested": html(page("Nested", "<div><div><div><p>deep words</p><button>Deep</button></div></div></div>")),
    "/list": html(
        page(
            "List",
            '<ul id="items"><li>first</li></ul><button id="add" onclick="const li = '
            "document.createElement('li'); li.textContent = 'second'; "
            "document.getElementById('items').append(li)\">Add</button>",
        )
    ),
}


def _ref(snapshot: str, role: str, name: str) -> str:
    return re.search(rf'{role} "{name}" \[ref=(e\d+)\]', snapshot).group(1)


def test_within_numbers_one_part_of_the_page_and_its_number_is_found_there_again(browse, pages_site):
    tool = browse()
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/two-forms", "mode": "aria", "within": "#shipping"})
    assert "Shipping" in out and "Billing" not in out
    assert out.count('button "Save"') == 1
    ref = _ref(out, "button", "Save")
    done = tool.call(
        {"action": "browse", "url": f"{pages_site.url}/two-forms", "actions": [{"click": f"@{ref}"}, {"get": "title"}]}
    )
    note, results = done.split("\n\n", 1)
    assert note == f'@{ref} = button "Save" within #shipping (1 of 1)'
    assert json.loads(results) == [{"get": "title", "value": "shipping saved"}]


def test_within_a_part_the_page_does_not_have_is_a_sentence(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages_site.url}/two-forms", "mode": "aria", "within": "#nope"})
    assert str(caught.value) == (
        f"browse: within=#nope matches nothing on {pages_site.url}/two-forms — name a part "
        f"of the page that is there (read it with mode=aria to see its parts)"
    )


def test_depth_stops_the_tree_at_a_level_and_a_depth_out_of_range_is_refused(browse, pages_site):
    tool = browse()
    full = tool.call({"action": "browse", "url": f"{pages_site.url}/nested", "mode": "aria"})
    shallow = tool.call({"action": "browse", "url": f"{pages_site.url}/nested", "mode": "aria", "depth": 1})
    assert 'button "Deep"' in full and 'button "Deep"' not in shallow
    assert max(len(ln) - len(ln.lstrip()) for ln in shallow.splitlines()) < max(
        len(ln) - len(ln.lstrip()) for ln in full.splitlines()
    )
    for bad in (0, 51, "two"):
        with pytest.raises(WebToolError) as caught:
            tool.call({"action": "browse", "url": f"{pages_site.url}/nested", "mode": "aria", "depth": bad})
        assert str(caught.value) == (
            f"browse: depth= is how many levels of the tree, a whole number from 1 to 50; {json.dumps(bad)} is not"
        )


def test_compact_drops_the_empty_containers_and_keeps_what_they_held(browse, pages_site):
    tool = browse()
    full = tool.call({"action": "browse", "url": f"{pages_site.url}/nested", "mode": "aria"})
    compact = tool.call({"action": "browse", "url": f"{pages_site.url}/nested", "mode": "aria", "compact": True})
    assert re.search(r"^\s*- generic \[ref=e\d+\]:$", full, re.M)
    assert not re.search(r"^\s*- (generic|group)( \[ref=e\d+\])?:?$", compact, re.M)
    assert 'button "Deep"' in compact and "deep words" in compact
    assert len(compact.splitlines()) < len(full.splitlines())


def test_delta_returns_only_what_changed_since_the_last_read_of_the_page_in_the_session(browse, pages_site):
    tool = browse()
    read = {"action": "browse", "url": f"{pages_site.url}/list", "mode": "aria", "delta": True, "session": "cart"}
    first = tool.call(read)
    assert first.startswith(f"first aria read of {pages_site.url}/list in this session: the whole tree below")
    assert tool.call(read) == f"nothing changed on {pages_site.url}/list since the last aria read in this session"
    after = tool.call({**read, "actions": [{"click": "#add"}]})
    lines = after.splitlines()
    assert lines[0] == f"changed on {pages_site.url}/list since the last aria read in this session (+ new, - gone):"
    assert any(re.fullmatch(r"\+ +- listitem \[ref=e\d+\]: second", line) for line in lines)
    assert "first" not in after and 'link "Home"' not in after  # what did not change is not read again
    assert len(lines) < len(first.splitlines())
    other = tool.call({**read, "session": "elsewhere"})  # another session has its own last snapshot
    assert other.startswith("first aria read of")


def test_the_aria_options_go_with_mode_aria_only(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages_site.url}/list", "mode": "text", "depth": 3})
    assert str(caught.value) == "browse: depth= goes with mode=aria; this call reads mode=text"
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages_site.url}/list", "mode": "aria", "delta": "maybe"})
    assert str(caught.value) == 'browse: delta= is true or false, not "maybe"'
