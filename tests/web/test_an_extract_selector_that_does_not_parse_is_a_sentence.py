"""extract each= and fields= with a selector lexbor cannot parse, or text no selector can hold (a lone
surrogate, which JSON allows), come back as a sentence naming the argument — never the parser's own error."""

from __future__ import annotations

import json

import pytest

from foldrun.web.errors import WebToolError
from foldrun.web.extract import by_selectors

PAGE = "<ul><li><a href='/a'>one</a></li><li><a href='/b'>two</a></li></ul>"
LONE_SURROGATE = json.loads('"\\ud800"')


def test_a_good_selector_reads_each_row_with_its_links_made_absolute():
    assert by_selectors(PAGE, "li", {"name": "a", "url": "a@href"}, "https://example.com/") == [
        {"name": "one", "url": "https://example.com/a"},
        {"name": "two", "url": "https://example.com/b"},
    ]


@pytest.mark.parametrize("each", ["a:has(", "li[", LONE_SURROGATE])
def test_an_each_that_is_no_selector_is_named(each):
    with pytest.raises(WebToolError) as caught:
        by_selectors(PAGE, each, None, "https://example.com/")
    assert str(caught.value) == f"extract each={each!r} is not a CSS selector"


@pytest.mark.parametrize("spec", ["a[[", f"a{LONE_SURROGATE}@href"])
def test_a_field_that_is_no_selector_is_named_with_its_field(spec):
    with pytest.raises(WebToolError) as caught:
        by_selectors(PAGE, "li", {"url": spec}, "https://example.com/")
    assert str(caught.value) == f"extract fields: url={spec!r} is not a CSS selector"
