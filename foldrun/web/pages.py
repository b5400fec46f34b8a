"""Reading an HTML page at a fidelity: markdown, text, meta, links.

Shared by `fetch` (the server's HTML) and `browse` (the rendered DOM), so the
two read a page the same way. HTML → markdown is
html-to-markdown with navigation and chrome dropped first (markdown.py); the
other reads are BeautifulSoup.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment

from . import markdown

# Never part of what a person reads.
_INVISIBLE = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "link", "meta")
# Chrome around the content: "navigation and footer dropped".
_CHROME = ("nav", "footer", "aside")
_CHROME_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search")
# The mount points a client-side app fills in once its JavaScript runs.
_APP_ROOTS = (
    "#root",
    "#app",
    "#__next",
    "#__nuxt",
    "#___gatsby",
    "[data-reactroot]",
    "app-root",
    "#svelte",
    "[ng-app]",
    "#q-app",
    "#main-app",
)


def soup_of(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def _strip(soup: BeautifulSoup, *, chrome: bool) -> BeautifulSoup:
    for tag in soup.find_all(_INVISIBLE):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    if chrome:
        for tag in soup.find_all(_CHROME):
            tag.decompose()
        for tag in soup.find_all(attrs={"role": list(_CHROME_ROLES)}):
            tag.decompose()
        for tag in soup.find_all("header"):
            if tag.find_parent(["article", "main", "section"]) is None:  # the site's header, not an article's
                tag.decompose()
        for tag in soup.find_all(attrs={"hidden": True}):
            tag.decompose()
        for tag in soup.find_all(attrs={"aria-hidden": "true"}):
            tag.decompose()
    return soup


def cleaned_html(html: str) -> str:
    """The page's HTML as a reader gets it: no scripts, styles, comments, hidden parts or chrome
    (navigation, footer, asides, the site's header), and no inline styles or event handlers."""
    soup = _strip(soup_of(html), chrome=True)
    for tag in soup.find_all(True):
        for name in [a for a in tag.attrs if a == "style" or a.lower().startswith("on")]:
            del tag.attrs[name]
    body = soup.body or soup
    return body.decode_contents().strip()


def title_of(soup: BeautifulSoup) -> str:
    return soup.title.get_text(" ", strip=True) if soup.title else ""


def to_markdown(html: str, base: str) -> str:
    """The page's content as markdown (foldrun/web/markdown.py: the compiled converter)."""
    return markdown.to_markdown(html, base)


_BLOCKS = (
    "p",
    "div",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "tr",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "ul",
    "ol",
    "table",
    "blockquote",
    "pre",
    "form",
    "main",
    "aside",
    "dd",
    "dt",
    "dl",
    "figcaption",
    "figure",
    "address",
    "hr",
    "caption",
    "label",
    "option",
    "summary",
    "details",
)


def to_text(html: str) -> str:
    """What a person sees, as plain text: block elements on their own lines, inline ones in the flow."""
    soup = _strip(soup_of(html), chrome=False)
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for cell in soup.find_all(["td", "th"]):
        cell.append("\t")
    for block in soup.find_all(_BLOCKS):
        block.insert_before("\n")
        block.append("\n")
    body = soup.body or soup
    text = body.get_text("")
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def links_of(html: str, base: str) -> list[dict[str, str]]:
    soup = soup_of(html)
    seen: list[dict[str, str]] = []
    for anchor in soup.find_all("a", href=True):
        href = anchor["href"].strip()
        if not href or href.startswith(("javascript:", "#")):
            continue
        seen.append({"text": anchor.get_text(" ", strip=True), "href": urljoin(base, href)})
    return seen


def links_text(links: list[dict[str, str]]) -> str:
    if not links:
        return "no links on the page"
    return "\n".join(f"- [{link['text'] or link['href']}]({link['href']})" for link in links)


def meta_of(html: str, base: str) -> dict[str, Any]:
    """The head as an SEO desk reads it (spec, `mode: meta`)."""
    soup = soup_of(html)

    def meta(name: str) -> str | None:
        tag = soup.find("meta", attrs={"name": re.compile(f"^{re.escape(name)}$", re.I)})
        return tag.get("content") if tag else None

    def link(rel: str) -> list:
        return [t for t in soup.find_all("link", href=True) if rel in [r.lower() for r in (t.get("rel") or [])]]

    og = {t["property"]: t.get("content", "") for t in soup.find_all("meta", attrs={"property": re.compile(r"^og:")})}
    twitter = {t["name"]: t.get("content", "") for t in soup.find_all("meta", attrs={"name": re.compile(r"^twitter:")})}
    json_ld: list[Any] = []
    for tag in soup.find_all("script", attrs={"type": "application/ld+json"}):
        try:
            json_ld.append(json.loads(tag.string or ""))
        except ValueError:
            json_ld.append({"unreadable": (tag.string or "")[:200]})
    canonical = link("canonical")
    images = soup.find_all("img")
    clean = _strip(soup_of(html), chrome=False)
    words = len((clean.body or clean).get_text(" ").split())
    html_tag = soup.find("html")
    return {
        "title": title_of(soup),
        "description": meta("description"),
        "canonical": urljoin(base, canonical[0]["href"]) if canonical else None,
        "robots": meta("robots"),
        "lang": html_tag.get("lang") if html_tag else None,
        "og": og,
        "twitter": twitter,
        "hreflang": [
            {"lang": t.get("hreflang"), "href": urljoin(base, t["href"])}
            for t in link("alternate")
            if t.get("hreflang")
        ],
        "feeds": [
            {"type": t.get("type"), "href": urljoin(base, t["href"]), "title": t.get("title")}
            for t in link("alternate")
            if (t.get("type") or "")
            in ("application/rss+xml", "application/atom+xml", "application/feed+json", "application/json")
        ],
        "jsonLd": json_ld,
        "headings": [
            {"level": int(h.name[1]), "text": h.get_text(" ", strip=True)}
            for h in soup.find_all(re.compile(r"^h[1-6]$"))
        ],
        "words": words,
        "links": len(soup.find_all("a", href=True)),
        "images": len(images),
        "imagesWithoutAlt": [urljoin(base, i.get("src") or "") for i in images if i.get("alt") is None],
        "imagesDecorative": [urljoin(base, i.get("src") or "") for i in images if i.get("alt") == ""],
    }


def javascript_shell(html: str) -> str | None:
    """Why this HTML looks like a page that builds itself with JavaScript, or None.

    The server sent almost no words for a person, and either scripts that will
    write them or an empty mount point a framework fills in.
    """
    soup = soup_of(html)
    scripts = len(soup.find_all("script"))
    noscript = " ".join(t.get_text(" ", strip=True) for t in soup.find_all("noscript")).lower()
    root = None
    for selector in _APP_ROOTS:
        found = soup.select_one(selector)
        if found is not None:
            root = found
            break
    text = to_text(html)
    words = len(text.split())
    if root is not None and len(root.get_text(" ", strip=True).split()) < 20 and scripts and words < 100:
        return f"its content mounts into an empty {_describe(root)} that a script fills in"
    if scripts and words < 40 and ("javascript" in noscript or words < 8):
        return (
            f"it sent {words} word{'s' if words != 1 else ''} of text and {scripts} script{'s' if scripts != 1 else ''}"
        )
    return None


def _describe(tag) -> str:  # noqa: ANN001
    if tag.get("id"):
        return f'<{tag.name} id="{tag["id"]}">'
    return f"<{tag.name}>"


# ------------------------------------------------------------------ feeds

FEED_TYPES = (
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
    "application/xml",
    "text/xml",
    "application/json",
)
FEED_PATHS = ("/feed", "/rss", "/feed.xml", "/rss.xml", "/atom.xml", "/index.xml", "/feed.json")


def feed_items(text: str) -> list[dict] | None:
    """RSS 2.0, Atom or JSON Feed → items (title, link, date, summary); None when it is not a feed.

    The stdlib parser resolves no external entities, and the bundled expat caps entity expansion.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            return None
        if not isinstance(data, dict) or "jsonfeed.org" not in str(data.get("version", "")):
            return None
        return [
            {
                "title": i.get("title"),
                "link": i.get("url"),
                "date": i.get("date_published"),
                "summary": _plain(i.get("summary") or i.get("content_text") or i.get("content_html") or ""),
            }
            for i in data.get("items") or []
            if isinstance(i, dict)
        ]
    if not stripped.startswith("<"):
        return None
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(stripped.encode("utf-8"))
    except ET.ParseError:
        return None
    tag = root.tag.split("}")[-1]
    if tag == "rss" or tag == "RDF":
        items = root.iter("item") if tag == "rss" else [e for e in root.iter() if e.tag.endswith("}item")]
        out = []
        for item in items:

            def text_of(name: str) -> str | None:
                for child in item:
                    if child.tag.split("}")[-1] == name and child.text:
                        return child.text.strip()
                return None

            out.append(
                {
                    "title": text_of("title"),
                    "link": text_of("link"),
                    "date": text_of("pubDate") or text_of("date"),
                    "summary": _plain(text_of("description") or ""),
                }
            )
        return out
    if tag == "feed":
        out = []
        for entry in [e for e in root if e.tag.split("}")[-1] == "entry"]:
            fields = {child.tag.split("}")[-1]: child for child in entry}
            link = next(
                (
                    c.get("href")
                    for c in entry
                    if c.tag.split("}")[-1] == "link" and c.get("rel", "alternate") == "alternate"
                ),
                None,
            )
            summary = fields.get("summary") if "summary" in fields else fields.get("content")
            out.append(
                {
                    "title": (fields["title"].text or "").strip() if "title" in fields else None,
                    "link": link,
                    "date": (fields.get("updated") if "updated" in fields else fields.get("published")).text
                    if ("updated" in fields or "published" in fields)
                    else None,
                    "summary": _plain(summary.text or "") if summary is not None else "",
                }
            )
        return out
    return None


def _plain(markup: str) -> str:
    text = to_text(markup).replace("\n", " ") if "<" in markup else markup
    return " ".join(text.split())[:500]
