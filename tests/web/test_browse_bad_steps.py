"""A step that cannot be done — a selector that matches nothing within its timeout, a number from another page,
a number whose count changed — is a sentence naming what and why, and the call's other results are kept (issue
12, "Bad input"; spec/tools.md "Numbered elements"). Real Chromium against the tests' own site."""

from __future__ import annotations

import json

import pytest

from foldrun.web import WebToolError

pytestmark = pytest.mark.e2e

KEPT = '\n\nWhat it had done:\n[\n {\n  "get": "title",\n  "value": "Cart"\n }\n]'


def _refused(tool, url: str, steps: list) -> str:
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": url, "actions": steps})
    return str(caught.value)


def _delete_refs(tool) -> list[str]:
    refs = json.loads((tool.sandbox / "outputs/.browser/refs.json").read_text())["default"]["refs"]
    return [ref for ref, entry in refs.items() if entry["name"] == "Delete"]


@pytest.mark.parametrize(
    "step",
    [
        {"click": "#nowhere", "timeout": 1500},
        {"fill": "#nowhere", "text": "x", "timeout": 1500},
        {"wait": "#nowhere", "timeout": 1500},
    ],
)
def test_a_selector_that_matches_nothing_within_its_timeout_says_so_and_keeps_what_was_done(browse, site, step):
    name = next(iter(step))
    said = _refused(browse(), f"{site.url}/buttons", [{"get": "title"}, step])
    assert said == f'browse: step 2 ({name} "#nowhere"): nothing on the page matches #nowhere within 1500 ms' + KEPT


def test_a_number_from_another_page_is_refused_and_keeps_what_was_done(browse, site):
    tool = browse()
    tool.call({"action": "browse", "url": f"{site.url}/form", "mode": "aria"})
    said = _refused(tool, f"{site.url}/buttons", [{"get": "title"}, {"click": "@e3"}])
    assert said == (
        f"@e3 was read on {site.url}/form, not on this page ({site.url}/buttons) — read this page with "
        f"mode=aria first and use its numbers" + KEPT
    )


def test_the_second_delete_after_a_third_appeared_refuses_instead_of_clicking_a_neighbour(browse, site):
    tool = browse()
    tool.call({"action": "browse", "url": f"{site.url}/buttons?n=2", "mode": "aria", "interactive": True})
    second = _delete_refs(tool)[1]
    said = _refused(tool, f"{site.url}/buttons?n=3", [{"get": "title"}, {"click": f"@{second}"}, {"get": "title"}])
    assert said == (
        f'@{second} was button "Delete" (2 of 2), and the page now has 3 of them — read the page with '
        f"mode=aria again and use the new numbers" + KEPT
    )
    assert "deleted" not in said  # no Delete was pressed: the title a click sets never came


def test_a_step_playwright_gives_up_on_is_said_without_playwrights_own_method_name(browse, site):
    said = _refused(
        browse(), f"{site.url}/buttons", [{"get": "title"}, {"select": "button", "value": "x", "timeout": 1500}]
    )
    assert said.startswith(
        'browse: step 2 (select "button") failed: strict mode violation: locator("button") resolved to 2 elements'
    )
    assert "Locator." not in said and "Error" not in said and said.endswith(KEPT)
