"""What `scrape` (and `crawl`'s `content`) read from a loaded page: its content in formats, metadata, links,
inventory, and the page itself as base64.

The page is read as the browser rendered it (`page.content()`), through the
web tool's own readers, so `scrape` and `web action=fetch`/`browse` read a page
the same way: markdown is foldrun/web/markdown.py's converter, `cleaned_html`
the same cleaning, metadata `pages.meta_of`. `readability` is the article as
Mozilla's Readability finds it (readability-lxml), then that converter.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import urldefrag, urlsplit

from playwright.sync_api import Page
from readability import Document

from foldrun.web import pages
from foldrun.web.net import scrub_url

from .load import Loaded

FORMATS = ("html", "cleaned_html", "markdown", "readability")
DEFAULT_FORMATS = ["markdown"]
MAX_LINKS = 1000
MAX_MEDIA = 500

# Every embedded thing the DOM names, its URL as the browser resolved it.
_MEDIA_JS = """() => {
  const out = [];
  const add = (kind, url) => { if (url && !url.startsWith('data:') && !url.startsWith('blob:')) out.push([kind, url]); };
  document.querySelectorAll('img').forEach(e => add('image', e.currentSrc || e.src));
  document.querySelectorAll('picture source[srcset]').forEach(e => add('image', new URL(e.srcset.split(/[\\s,]/)[0], document.baseURI).href));
  document.querySelectorAll('video').forEach(e => { add('video', e.currentSrc || e.src); if (e.poster) add('image', e.poster); });
  document.querySelectorAll('video source[src]').forEach(e => add('video', e.src));
  document.querySelectorAll('audio').forEach(e => add('audio', e.currentSrc || e.src));
  document.querySelectorAll('audio source[src]').forEach(e => add('audio', e.src));
  document.querySelectorAll('iframe[src], frame[src]').forEach(e => add('iframe', e.src));
  document.querySelectorAll('embed[src]').forEach(e => add('embed', e.src));
  document.querySelectorAll('object[data]').forEach(e => add('object', e.data));
  document.querySelectorAll('script[src]').forEach(e => add('script', e.src));
  return out;
}"""


def contents(html: str, url: str, formats: list[str]) -> dict[str, str]:
    """One key per format asked for."""
    out: dict[str, str] = {}
    for name in formats:
        if name == "html":
            out[name] = html
        elif name == "cleaned_html":
            out[name] = pages.cleaned_html(html)
        elif name == "markdown":
            out[name] = pages.to_markdown(html, url)
        elif name == "readability":
            out[name] = readable(html, url)
    return out


def readable(html: str, url: str) -> str:
    """The article of the page, as markdown; a page readability-lxml cannot parse gives its plain markdown."""
    try:
        document = Document(html, url=url)
        article = document.summary(html_partial=True)
        title = document.short_title()
    except Exception:  # noqa: BLE001 - a page it cannot read still has the converter's reading
        return pages.to_markdown(html, url)
    return pages.to_markdown(f"<html><head><title>{_escape(title)}</title></head><body>{article}</body></html>", url)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def metadata(html: str, url: str, loaded: Loaded) -> dict[str, Any]:
    meta = pages.meta_of(html, url)
    return {
        "title": meta["title"],
        "description": meta["description"],
        "statusCode": loaded.status,
        "language": meta["lang"],
        "wordCount": meta["words"],
    }


def same_host(url: str, host: str) -> bool:
    return (urlsplit(url).hostname or "").lower() == host


def links(html: str, url: str) -> list[dict[str, Any]]:
    """Every http(s) link of the page once (fragment dropped), with its text and whether it stays on the page's host."""
    host = (urlsplit(url).hostname or "").lower()
    seen: dict[str, dict[str, Any]] = {}
    for link in pages.links_of(html, url):
        target = urldefrag(link["href"])[0]
        if urlsplit(target).scheme not in ("http", "https") or target in seen:
            continue
        seen[target] = {"url": scrub_url(target), "text": link["text"], "internal": same_host(target, host)}
        if len(seen) >= MAX_LINKS:
            break
    return list(seen.values())


def inventory(page: Page, loaded: Loaded) -> dict[str, Any]:
    """Embedded media (images, video, audio, iframes, embeds) and the other hosts the page loads or embeds from."""
    host = (urlsplit(loaded.url).hostname or "").lower()
    named: list[list[str]] = page.evaluate(_MEDIA_JS)
    media: list[dict[str, Any]] = []
    known: set[tuple[str, str]] = set()
    others: dict[str, dict[str, Any]] = {}

    def other(url: str, kind: str, requested: bool) -> None:
        where = (urlsplit(url).hostname or "").lower()
        if urlsplit(url).scheme not in ("http", "https") or not where or where == host:
            return
        entry = others.setdefault(where, {"host": where, "requests": 0, "kinds": set()})
        entry["requests"] += 1 if requested else 0
        entry["kinds"].add(kind)

    for kind, url in named:
        if kind != "script" and (kind, url) not in known and len(media) < MAX_MEDIA:
            known.add((kind, url))
            media.append({"kind": kind, "url": scrub_url(url), "thirdParty": not same_host(url, host)})
        other(url, kind, requested=False)
    for url, resource_type in loaded.requests:
        other(url, resource_type, requested=True)
    hosts = [{**entry, "kinds": sorted(entry["kinds"])} for entry in others.values()]
    hosts.sort(key=lambda entry: (-entry["requests"], entry["host"]))
    return {"media": media, "thirdPartyHosts": hosts}


def screenshot_b64(page: Page) -> str:
    return base64.b64encode(page.screenshot(full_page=True, type="png")).decode("ascii")


def pdf_b64(page: Page) -> str:
    return base64.b64encode(page.pdf(format="A4", print_background=True)).decode("ascii")


def mhtml_b64(page: Page) -> str:
    """The page and everything it loaded as one MHTML archive (the DevTools protocol's `Page.captureSnapshot`)."""
    cdp = page.context.new_cdp_session(page)
    try:
        snapshot = cdp.send("Page.captureSnapshot", {"format": "mhtml"})
    finally:
        cdp.detach()
    return base64.b64encode(str(snapshot.get("data", "")).encode("utf-8")).decode("ascii")
