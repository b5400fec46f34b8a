"""ScrapingBee: the unblocker — the page rendered in a real browser (`render_js`) behind a proxy pool."""

from __future__ import annotations

from .base import Auth, Call, adapter
from ..pages import to_markdown, to_text


@adapter(
    "fetch",
    "scrapingbee",
    base="https://app.scrapingbee.com",
    auth=Auth("query", "api_key"),
    page="https://www.scrapingbee.com/documentation/",
    matched="2026-12-01",
)
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    url = urls[0]
    # Its answer is the page itself, not JSON; a page's own error status comes back as Spb-Initial-Status-Code.
    response = call.send(
        "GET",
        "/api/v1/",
        params={"url": url, "render_js": "true"},
        headers={"Accept": "*/*"},
        timeout=max(call.tool.fetch_timeout, 60.0),
    )
    html = response.text
    status = response.headers.get("spb-initial-status-code")
    prefix = (
        f"{url}: HTTP {status} (through scrapingbee)\n" if status and status.isdigit() and int(status) >= 400 else ""
    )
    text = html if mode == "html" else to_text(html) if mode == "text" else to_markdown(html, url)
    return [(url, prefix + text)]
