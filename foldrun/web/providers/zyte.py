"""Zyte API: the unblocker — a page rendered behind a proxy pool (fetch), and its automatic extraction."""
from __future__ import annotations

import base64

from ..errors import WebToolError
from .base import BASIC, Call, adapter
from ..pages import to_markdown, to_text

BASE = "https://api.zyte.com"
PAGE = "https://docs.zyte.com/zyte-api/usage/reference.html"


def _status(url: str, data: dict) -> None:
    status = data.get("statusCode")
    if isinstance(status, int) and status >= 400:
        raise WebToolError(f"{url}: HTTP {status} (through zyte)")


@adapter("fetch", "zyte", base=BASE, auth=BASIC, page=PAGE, matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    url = urls[0]
    data = call.json("POST", "/v1/extract", json={"url": url, "browserHtml": True}, timeout=max(call.tool.fetch_timeout, 60.0))
    _status(url, data)
    html = data.get("browserHtml")
    if html is None and data.get("httpResponseBody"):  # the plain-request form answers the body in base64
        html = base64.b64decode(str(data["httpResponseBody"])).decode("utf-8", "replace")
    html, base = str(html or ""), str(data.get("url") or url)
    text = html if mode == "html" else to_text(html) if mode == "text" else to_markdown(html, base)
    return [(url, text)]


@adapter("extract", "zyte", base=BASE, auth=BASIC, page="https://docs.zyte.com/zyte-api/usage/custom-attributes.html",
         matched="2026-12-01")
def extract(call: Call, url: str, schema: dict | None, prompt: str | None) -> object:
    if prompt and not schema:
        raise WebToolError("zyte extracts by schema= (its custom attributes) or, with neither, an article; "
                           "prompt= alone is for firecrawl or hyperbrowser")
    body: dict = {"url": url}
    if schema:
        attributes = schema.get("properties") if isinstance(schema.get("properties"), dict) else schema
        body["customAttributes"] = attributes
        body["article"] = True  # custom attributes ride on a product type
    else:
        body["article"] = True
    data = call.json("POST", "/v1/extract", json=body, timeout=max(call.tool.fetch_timeout, 60.0))
    _status(url, data)
    if schema:
        return (data.get("customAttributes") or {}).get("values")
    return data.get("article")
