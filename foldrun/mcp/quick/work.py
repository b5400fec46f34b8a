"""The quick tools' work on the page of their fresh session: scrape, screenshot and pdf.

Each takes the already-checked arguments and a Playwright sync `Page` that no
one else uses, loads the URL and reads it; foldrun/mcp/tools/quick.py opens the
session around it.
"""

from __future__ import annotations

import base64
from typing import Any

from playwright.sync_api import Page

from foldrun.web.net import scrub_url

from ..results import ToolResult, embedded_blob, image, media
from . import read
from .load import DEFAULT_TIMEOUT_MS, Loaded, invalid, load

PDF_URI = "webagent://quick/pdf"
MAX_CONTENT = 500_000  # characters of one format; a longer page is cut, and says so
IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def loaded(page: Page, url: str, args: dict[str, Any], requests: list | None = None) -> Loaded:
    return load(
        page,
        url,
        wait_until=args.get("waitUntil", "load"),
        timeout_ms=int(args.get("timeoutMs", DEFAULT_TIMEOUT_MS)),
        wait_for_text=args.get("waitForText"),
        requests=requests,
    )


def _cap(text: str) -> str:
    if len(text) <= MAX_CONTENT:
        return text
    return text[:MAX_CONTENT] + f"\n\n[cut at {MAX_CONTENT:,} of {len(text):,} characters]"


def scrape(page: Page, url: str, args: dict[str, Any]) -> dict[str, Any]:
    """The scrape result: `url`, `content` (one key per format), `metadata`, `links`, and what was asked besides."""
    formats = list(dict.fromkeys(args.get("format") or read.DEFAULT_FORMATS))
    state = loaded(page, url, args)
    html = page.content()
    final = state.url
    out: dict[str, Any] = {
        "url": scrub_url(final),
        "content": {name: _cap(text) for name, text in read.contents(html, final, formats).items()},
        "metadata": read.metadata(html, final, state),
        "links": read.links(html, final),
    }
    if args.get("inventory"):
        out["inventory"] = read.inventory(page, state)
    if args.get("screenshot"):
        out["screenshot"] = read.screenshot_b64(page)
    if args.get("pdf"):
        out["pdf"] = read.pdf_b64(page)
    if args.get("mhtml"):
        out["mhtml"] = read.mhtml_b64(page)
    return out


def check_screenshot(args: dict[str, Any]) -> None:
    if "quality" in args and args.get("format", "png") == "png":
        raise invalid("quality", "Applies to jpeg and webp only; leave it out for png.")


def screenshot(page: Page, url: str, args: dict[str, Any]) -> ToolResult:
    """The page as an image content item, in the format asked."""
    kind = args.get("format", "png")
    full = bool(args.get("fullPage", True))
    loaded(page, url, args)
    if kind == "webp":
        data = _webp(page, full, args.get("quality"))
    else:
        options: dict[str, Any] = {"full_page": full, "type": kind}
        if "quality" in args:
            options["quality"] = int(args["quality"])
        data = page.screenshot(**options)
    return media(image(data, IMAGE_TYPES[kind]))


def _webp(page: Page, full: bool, quality: int | None) -> bytes:
    """Playwright writes png and jpeg only; the DevTools protocol's captureScreenshot also writes webp."""
    cdp = page.context.new_cdp_session(page)
    try:
        params: dict[str, Any] = {"format": "webp", "captureBeyondViewport": full}
        if quality is not None:
            params["quality"] = int(quality)
        if full:
            size = cdp.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = cdp.send("Page.captureScreenshot", params)
    finally:
        cdp.detach()
    return base64.b64decode(shot["data"])


def pdf(page: Page, url: str, args: dict[str, Any]) -> ToolResult:
    """The page printed to PDF, as the `webagent://quick/pdf` resource."""
    loaded(page, url, args)
    data = page.pdf(
        format=args.get("paper", "A4"),
        landscape=bool(args.get("landscape", False)),
        print_background=bool(args.get("printBackground", True)),
    )
    return media(embedded_blob(PDF_URI, "application/pdf", data))
