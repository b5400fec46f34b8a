"""HTML → markdown for `fetch` and `browse`: the compiled converter, chrome dropped first.

Measured in tests/bench/web_bench.py: `html-to-markdown` (Rust) is several times
faster than markdownify over BeautifulSoup on real documentation pages, and it
converts the deeply nested ones on which markdownify raised RecursionError. It
keeps headings (ATX), lists, tables and resolves every link and image against
the page's URL (`base_url`). The page's chrome — navigation, footer, asides,
the site's own header, anything hidden — is removed with selectolax (lexbor)
before conversion, and the single `<main>`/`<article>` is taken when there is
one, so what reaches the model is the content.
"""

from __future__ import annotations

import dataclasses
import re
from html import unescape

import html_to_markdown as h2m
from html_to_markdown import api as _h2m_api
from selectolax.lexbor import LexborHTMLParser

# Never part of what a person reads.
_INVISIBLE = "script, style, noscript, template, svg, canvas, iframe, object, embed, link, meta, form"
# Chrome around the content: "navigation and footer dropped".
_CHROME = (
    "nav, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], "
    "[role=search], [hidden], [aria-hidden=true]"
)
_WRAPPERS = ("div", "span", "font", "center", "section", "small", "big")

_OPTIONS_CACHE: dict[str, h2m.ConversionOptions] = {}


def _options(base: str) -> h2m.ConversionOptions:
    options = _OPTIONS_CACHE.get(base)
    if options is None:
        options = h2m.ConversionOptions(
            base_url=base or None,
            heading_style="atx",
            bullets="-",
            escape_misc=False,
            extract_metadata=False,
            code_block_style="backticks",
        )
        if len(_OPTIONS_CACHE) > 256:
            _OPTIONS_CACHE.clear()
        _OPTIONS_CACHE[base] = options
    return options


def _content_of(tree: LexborHTMLParser):  # noqa: ANN202 - a lexbor node
    for selector in ("main", "[role=main]", "article"):
        found = tree.css(selector)
        if len(found) == 1:
            return found[0]
    return tree.body or tree.root


def _collapse(text: str) -> str:
    """No trailing blanks on a line, no more than one empty line in a row.

    Each step runs only when a substring search (C, memchr-fast) finds something for it: a regex
    for trailing spaces backtracks over every long run of spaces (quadratic), and `\\n{3,}` has no
    literal prefix to search for, so it costs more over a large page than `\\n\\n\\n+` five times over.
    """
    if " \n" in text or "\t\n" in text or "\u00a0\n" in text:
        text = "\n".join(line.rstrip(" \t\u00a0") for line in text.split("\n"))
    if "\n\n\n" in text:
        text = _BLANKS.sub("\n\n", text)
    return text.strip() if text[:1].isspace() or text[-1:].isspace() else text


_BLANKS = re.compile("\n\n\n+")


def _ends_trimmed(text: str) -> str:
    """The fast path's one pass over the converter's answer: its ends stripped, the rest as written.

    Outside a code block the converter leaves no run of empty lines and no trailing blank but a
    `<br>`'s two spaces (markdown's hard break); inside one, blanks are the code's own. `_collapse`
    over the whole answer cost a large page two thirds of the conversion again — split into lines,
    rejoined, searched and copied three times (140 ms of a 14 MB page the converter reads in 180 ms,
    its answer held four bytes a character) — to remove those hard breaks and reflow code blocks.
    """
    return text.strip() if text[:1].isspace() or text[-1:].isspace() else text


def _convert(tree: LexborHTMLParser, content, base: str) -> str:  # noqa: ANN001
    """Convert; a page nested deeper than the converter descends loses no text.

    Past ~1,000 levels html-to-markdown drops the subtree with a warning (and
    markdownify raised RecursionError). Such nesting is wrappers — div, span,
    font — which carry no markdown of their own, so they are unwrapped and the
    page converted again; should even that fail, the page's text is returned.
    """
    try:
        result = h2m.convert(content.html or "", _options(base))
        if not result.warnings:
            return result.content or ""
        tree.unwrap_tags(list(_WRAPPERS))
        content = _content_of(tree)
        result = h2m.convert(content.html or "", _options(base))
        if not result.warnings:
            return result.content or ""
    except Exception:  # noqa: BLE001 - a converter failure must never cost the read
        pass
    return content.text(separator="\n") if content is not None else ""


def to_markdown(html: str, base: str) -> str:
    """The page's content as markdown, the title as a heading when the content has none.

    The fast path is the converter alone, told which chrome to leave out
    (`_EXCLUDED`) and handed the single `<main>` when the page has one, its
    answer kept as written but for its ends; only a page it cannot descend
    whole (warnings: nesting past its depth) is parsed here first (`_slow`).
    """
    title = _title(html)
    result = None
    try:
        result = _fast_convert(_main_slice(html), base)
    except Exception:  # noqa: BLE001 - the slow path reads it, or says its text
        result = None
    if result is not None and not result.warnings:
        text = _ends_trimmed(result.content or "")
    else:
        return _slow(html, base, title)
    if title and not text.lstrip().startswith("# "):
        text = f"# {title}\n\n{text}"
    return text


_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_MAIN_OPEN = re.compile(r"<main[\s>]", re.I)


def _title(html: str) -> str:
    found = _TITLE.search(html, 0, 200_000)
    return " ".join(unescape(found.group(1)).split()) if found else ""


def _main_slice(html: str) -> str:
    """The one `<main>…</main>` of the page, when it has exactly one; else the whole page."""
    opens = _MAIN_OPEN.findall(html)
    if len(opens) != 1:
        return html
    start = _MAIN_OPEN.search(html).start()
    end = html.rfind("</main>")
    if end < 0:
        end = html.lower().rfind("</main>")
    return html[start : end + len("</main>")] if end > start else html


# What the converter is told to leave out, beyond what it drops by itself. Its own defaults, set
# explicitly below, already drop script, style, noscript, template, link and meta, every form
# (remove_forms), nav and the site's header (remove_navigation) and whatever is [hidden]
# (hidden_content="drop"): naming those again cost a pass each and changed no page
# (tests/web/test_markdown.py holds each of them out). One selector list, not one per selector.
_EXCLUDED = (
    "svg, canvas, iframe, object, footer, aside, [role=navigation], [role=banner], [role=contentinfo], "
    "[role=complementary], [role=search], [aria-hidden=true], img[src^='data:']"
)
_FAST = h2m.ConversionOptions(
    heading_style="atx",
    bullets="-",
    escape_misc=False,
    extract_metadata=False,
    code_block_style="backticks",
    exclude_selectors=[_EXCLUDED],
    hidden_content="drop",
    preprocessing=h2m.PreprocessingOptions(enabled=True, remove_navigation=True, remove_forms=True),
)


def _native_template() -> dict | None:
    """_FAST as the compiled converter's own options, less base_url, or None if this version has no such seam.

    h2m.convert turns its options dataclass into the compiled one on every call — 30-180 µs, as long
    as converting a small page takes, and a crawl converts every page with a new base URL. Made once,
    each page then costs one constructor call with its base_url (~10 µs).
    """
    try:
        made = _h2m_api._to_rust_conversion_options(_FAST)
        names = [f.name for f in dataclasses.fields(h2m.ConversionOptions) if f.name not in ("base_url", "visitor")]
        return {name: getattr(made, name) for name in names}
    except Exception:  # noqa: BLE001 - another release of the converter: the public call below, at its cost
        return None


_TEMPLATE = _native_template()


def _fast_convert(html: str, base: str):  # noqa: ANN202 - the converter's ConversionResult
    if _TEMPLATE is not None:
        options = _h2m_api._rust.ConversionOptions(**_TEMPLATE, base_url=base or None)
        return _h2m_api._rust.convert(html=html, options=options, visitor=None)
    return h2m.convert(html, dataclasses.replace(_FAST, base_url=base or None))


def _slow(html: str, base: str, title: str) -> str:
    """Chrome removed with selectolax first, wrappers unwrapped when the converter cannot descend."""
    tree = LexborHTMLParser(html)
    for node in tree.css(_INVISIBLE):
        node.decompose()
    for node in tree.css(_CHROME):
        node.decompose()
    for node in tree.css("header"):
        # the site's header, not an article's own
        parent, inside = node.parent, False
        while parent is not None:
            if parent.tag in ("article", "main", "section"):
                inside = True
                break
            parent = parent.parent
        if not inside:
            node.decompose()
    for node in tree.css("img[src^='data:']"):
        node.replace_with(node.attributes.get("alt") or "")
    content = _content_of(tree)
    if content is None:
        return f"# {title}" if title else ""
    text = _convert(tree, content, base)
    text = _collapse(text)
    if title and not text.lstrip().startswith("# "):
        text = f"# {title}\n\n{text}"
    return text
