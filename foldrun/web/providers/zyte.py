"""Zyte API: the unblocker — a page rendered behind a proxy pool (fetch), and its automatic extraction.

A fetch asks for `browserHtml`, the page as a browser rendered it. A fetch kept with `save=` asks for
`httpResponseBody` (base64) with `httpResponseHeaders` instead: Zyte's browser answers HTML only, and
what is kept may be a PDF or an image, whose bytes are kept as the site sent them; an HTML answer is
converted as asked, from the site's own HTML.
"""

from __future__ import annotations

import base64
import binascii

from ..body import Body
from ..errors import WebToolError
from ..pages import to_markdown, to_text
from .base import BASIC, Call, Raw, adapter

BASE = "https://api.zyte.com"
PAGE = "https://docs.zyte.com/zyte-api/usage/reference.html"


class _Answer(Body):
    def __init__(self, content_type: str, body: bytes) -> None:
        self.content_type, self.body = content_type, body


def _status(url: str, data: dict) -> None:
    status = data.get("statusCode")
    if isinstance(status, int) and status >= 400:
        raise WebToolError(f"{url}: HTTP {status} (through zyte)")


def _content_type(data: dict) -> str:
    for header in data.get("httpResponseHeaders") or []:
        if isinstance(header, dict) and str(header.get("name", "")).lower() == "content-type":
            return str(header.get("value") or "")
    return ""


def _body(url: str, data: dict) -> bytes:
    try:
        return base64.b64decode(str(data.get("httpResponseBody") or ""), validate=True)
    except (binascii.Error, ValueError):
        raise WebToolError(f"{url}: zyte's httpResponseBody is not base64, so nothing was kept") from None


def _read(html: str, base: str, mode: str) -> str:
    return html if mode == "html" else to_text(html) if mode == "text" else to_markdown(html, base)


@adapter("fetch", "zyte", base=BASE, auth=BASIC, page=PAGE, matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str | Raw]]:
    url = urls[0]
    wait = max(call.tool.fetch_timeout, 60.0)
    if call.saving:
        data = call.json(
            "POST",
            "/v1/extract",
            json={"url": url, "httpResponseBody": True, "httpResponseHeaders": True},
            timeout=wait,
        )
        _status(url, data)
        answer = _Answer(_content_type(data), _body(url, data))
        if not answer.is_text():
            return [(url, Raw(answer.media_type, answer.body))]
        text = answer.text
        return [(url, _read(text, str(data.get("url") or url), mode) if answer.is_html() else text)]
    data = call.json("POST", "/v1/extract", json={"url": url, "browserHtml": True}, timeout=wait)
    _status(url, data)
    html = data.get("browserHtml")
    if html is None and data.get("httpResponseBody"):  # an answer in the plain-request form: base64
        html = _body(url, data).decode("utf-8", "replace")
    return [(url, _read(str(html or ""), str(data.get("url") or url), mode))]


@adapter(
    "extract",
    "zyte",
    base=BASE,
    auth=BASIC,
    page="https://docs.zyte.com/zyte-api/usage/custom-attributes.html",
    matched="2026-12-01",
)
def extract(call: Call, url: str, schema: dict | None, prompt: str | None) -> object:
    if prompt and not schema:
        raise WebToolError(
            "zyte extracts by schema= (its custom attributes) or, with neither, an article; "
            "prompt= alone is for firecrawl or hyperbrowser"
        )
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
