"""fetch's HTML → markdown (foldrun/web/markdown.py): what the spec keeps, and no crash on deep pages."""
from __future__ import annotations

from foldrun.web.markdown import to_markdown

PAGE = """<!doctype html><html><head><title>Guide</title></head><body>
<header><a href="/">Site</a></header><nav><a href="/a">Menu item</a></nav>
<div role="navigation">Breadcrumbs here</div>
<main><h1>Guide</h1><h2>Steps</h2><ol><li>First</li><li>Second</li></ol>
<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Pro</td><td>$9</td></tr></table>
<p>See <a href="../docs/x.html">the docs</a> and <img src="img/p.png" alt="a plot">.</p>
<article><header><h3>An article's own header</h3></header></article>
</main><aside>Related</aside><footer>Copyright</footer></body></html>"""


def test_headings_lists_tables_and_absolute_links_are_kept_and_chrome_dropped():
    out = to_markdown(PAGE, "https://example.com/guide/intro.html")
    assert out.startswith("# Guide\n\n## Steps\n\n1. First\n2. Second")
    assert "| Plan | Price |" in out and "| Pro  | $9    |" in out
    assert "[the docs](https://example.com/docs/x.html)" in out
    assert "![a plot](https://example.com/guide/img/p.png)" in out
    assert "### An article's own header" in out
    for chrome in ("Menu item", "Breadcrumbs", "Related", "Copyright", "Site"):
        assert chrome not in out


def test_a_page_nested_three_thousand_deep_converts_with_its_text_where_markdownify_recursed_out():
    import pytest
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    deep = "<p>top</p>" + "<div><span>" * 3_000 + "the deepest words" + "</span></div>" * 3_000 + "<p>end</p>"
    with pytest.raises(RecursionError):
        MarkdownConverter().convert_soup(BeautifulSoup(deep, "html.parser"))
    out = to_markdown(deep, "https://example.com/")
    assert out == "top\n\nthe deepest words\n\nend"


def test_a_page_without_a_main_reads_its_body_with_the_title_as_heading():
    out = to_markdown("<html><head><title>Plain</title></head><body><p>Just words.</p></body></html>", "https://e.com/")
    assert out == "# Plain\n\nJust words."
