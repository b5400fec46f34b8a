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


HIDDEN = {
    "script": "<script>var leaked = 1;</script>",
    "style": "<style>.leaked{}</style>",
    "noscript": "<noscript>leaked</noscript>",
    "template": "<template><p>leaked</p></template>",
    "svg": "<svg><text>leaked</text></svg>",
    "canvas": "<canvas>leaked</canvas>",
    "iframe": "<iframe src='/f'>leaked</iframe>",
    "object": "<object data='/o'>leaked</object>",
    "form": "<form><label>leaked</label><input value='leaked'><button>leaked</button></form>",
    "nav": "<nav><a href='/n'>leaked</a></nav>",
    "footer": "<footer>leaked</footer>",
    "aside": "<aside>leaked</aside>",
    "role=navigation": "<div role='navigation'>leaked</div>",
    "role=banner": "<div role='banner'>leaked</div>",
    "role=contentinfo": "<div role='contentinfo'>leaked</div>",
    "role=complementary": "<div role='complementary'>leaked</div>",
    "role=search": "<div role='search'>leaked</div>",
    "hidden": "<p hidden>leaked</p>",
    "aria-hidden": "<span aria-hidden='true'>leaked</span>",
    "inline data image": "<img src='data:image/png;base64,bGVha2Vk' alt=''>",
}


def test_nothing_invisible_or_chrome_reaches_the_markdown_wherever_it_sits():
    import pytest

    for what, fragment in HIDDEN.items():
        for page in (
            f"<html><body>{fragment}<div><p>kept words</p></div></body></html>",
            f"<html><body><main><p>kept words</p>{fragment}</main></body></html>",
            f"<html><body><div><div><p>kept words</p><p>a {fragment} b</p></div></div></body></html>",
            f"<html><body><table><tr><td>{fragment}kept words</td></tr></table></body></html>",
        ):
            out = to_markdown(page, "https://example.com/")
            if "leaked" in out or "bGVha2Vk" in out or "kept words" not in out:
                pytest.fail(f"{what}: {page!r} → {out!r}")


def test_the_site_header_is_dropped_and_an_articles_own_kept():
    out = to_markdown(
        "<html><body><header>Site name</header><main><header>Own header</header><p>Words.</p></main></body></html>",
        "https://example.com/",
    )
    assert out == "Own header\n\nWords."


def test_the_options_made_once_convert_exactly_as_the_converters_public_call():
    import dataclasses

    import html_to_markdown as h2m

    from foldrun.web import markdown

    assert markdown._TEMPLATE is not None  # this release of html-to-markdown still has the seam
    base = "https://example.com/guide/intro.html"
    public = h2m.convert(PAGE, dataclasses.replace(markdown._FAST, base_url=base))
    assert markdown._fast_convert(PAGE, base).content == public.content


def test_a_code_block_keeps_its_own_blank_lines_and_a_br_stays_a_hard_break():
    page = (
        "<html><head><title>Code</title></head><body><main><h1>Code</h1>"
        "<p>First line<br>second line</p>"
        "<pre><code>def f():\n    x = 1   \n\n\n    return x\n</code></pre><p>After.</p></main></body></html>"
    )
    out = to_markdown(page, "https://example.com/")
    assert "First line  \nsecond line" in out  # markdown's hard break, as the converter wrote it
    assert "```\ndef f():\n    x = 1   \n\n\n    return x\n```" in out  # the code as written, blanks and all
    assert out.startswith("# Code\n\n") and out.endswith("After.")
