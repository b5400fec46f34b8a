"""The input schemas of the quick tools, as the spec's tables give them (names, types, ranges, defaults)."""
from __future__ import annotations

from typing import Any

from browsing.options import BLOCKABLE, ENGINES, MAX_URL

from ..tools.sessions import CREATE_SCHEMA
from .load import DEFAULT_TIMEOUT_MS, MAX_WAIT_TEXT, TIMEOUT_MS, WAIT_UNTIL
from .read import DEFAULT_FORMATS, FORMATS


def _url(what: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_URL,
            "description": f"{what}: an http or https URL, at most {MAX_URL} characters."}


# "Same meaning as in create_session": its own schema's entries, handed to the tool's fresh session.
_CREATE = CREATE_SCHEMA["properties"]
SESSION_PROPERTIES: dict[str, Any] = {
    "engine": {"enum": list(ENGINES), "description": "The browser engine of the session. Default chromium."},
    "device": _CREATE["device"],
    "viewport": _CREATE["viewport"],
    "block": {"type": "array", "items": {"enum": list(BLOCKABLE)}, "uniqueItems": True,
              "description": "Kinds of resource the browser does not load."},
    "allowHosts": _CREATE["allowHosts"],
    "proxyUrl": _CREATE["proxyUrl"],
}

WAIT_PROPERTIES: dict[str, Any] = {
    "waitUntil": {"enum": list(WAIT_UNTIL), "default": "load",
                  "description": "When the page counts as loaded. Default load."},
    "waitForText": {"type": "string", "minLength": 1, "maxLength": MAX_WAIT_TEXT,
                    "description": f"Also wait until this text is on the page. At most {MAX_WAIT_TEXT} characters."},
    "timeoutMs": {"type": "integer", "minimum": TIMEOUT_MS[0], "maximum": TIMEOUT_MS[1],
                  "default": DEFAULT_TIMEOUT_MS,
                  "description": f"How long the page may take to load, and the text to appear. "
                                 f"{TIMEOUT_MS[0]} to {TIMEOUT_MS[1]}. Default {DEFAULT_TIMEOUT_MS}."},
}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": ["url"], "additionalProperties": False}


SCRAPE = _object({
    "url": _url("The page"),
    "format": {"type": "array", "items": {"enum": list(FORMATS)}, "minItems": 1, "uniqueItems": True,
               "default": DEFAULT_FORMATS,
               "description": "Any of html, cleaned_html, markdown, readability. Default [\"markdown\"]."},
    **WAIT_PROPERTIES,
    "screenshot": {"type": "boolean", "default": False, "description": "Also return a full-page PNG, as base64."},
    "pdf": {"type": "boolean", "default": False, "description": "Also return the page as an A4 PDF, as base64."},
    "mhtml": {"type": "boolean", "default": False,
              "description": "Also return the page and what it loaded as one MHTML archive, as base64."},
    "inventory": {"type": "boolean", "default": False,
                  "description": "Also list the embedded media and the third-party hosts the page uses."},
    **SESSION_PROPERTIES,
})

SCREENSHOT = _object({
    "url": _url("The page"),
    "fullPage": {"type": "boolean", "default": True, "description": "The whole page, not only the window. Default true."},
    "format": {"enum": ["png", "jpeg", "webp"], "default": "png", "description": "png, jpeg or webp. Default png."},
    "quality": {"type": "integer", "minimum": 0, "maximum": 100,
                "description": "0 to 100, for jpeg and webp."},
    **WAIT_PROPERTIES,
    **SESSION_PROPERTIES,
})

PDF = _object({
    "url": _url("The page"),
    "paper": {"enum": ["A4", "Letter", "Legal"], "default": "A4", "description": "A4, Letter or Legal. Default A4."},
    "landscape": {"type": "boolean", "default": False, "description": "Default false."},
    "printBackground": {"type": "boolean", "default": True,
                        "description": "Print background colours and images. Default true."},
    **WAIT_PROPERTIES,
    **SESSION_PROPERTIES,
})

_PATTERNS = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 500}, "maxItems": 50}

CRAWL = _object({
    "url": _url("Where to start"),
    "scope": {"oneOf": [{"enum": ["host", "subdomains"]},
                        {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 253},
                         "minItems": 1, "maxItems": 20}],
              "default": "host",
              "description": "host (default): the start URL's host; subdomains: it and its subdomains; "
                             "or a list of up to 20 hosts (*.example.com for its subdomains)."},
    "include": {**_PATTERNS, "description": "Only crawl URLs matching one of these globs (a pattern starting "
                                            "with / is matched against the path). Up to 50."},
    "exclude": {**_PATTERNS, "description": "Never crawl URLs matching one of these globs. Up to 50."},
    "maxPages": {"type": "integer", "minimum": 1, "maximum": 100, "default": 25, "description": "1 to 100. Default 25."},
    "maxDepth": {"type": "integer", "minimum": 0, "maximum": 5, "default": 2,
                 "description": "Links followed from the start URL: 0 to 5. Default 2."},
    "delayMs": {"type": "integer", "minimum": 0, "maximum": 10_000, "default": 500,
                "description": "Pause between pages: 0 to 10000. Default 500."},
    "respectRobots": {"type": "boolean", "default": True, "description": "Obey the site's robots.txt. Default true."},
    "sitemap": {"type": "boolean", "default": False,
                "description": "Also crawl the pages the site's sitemaps list. Default false."},
    "content": {"type": "array", "items": {"enum": list(FORMATS)}, "uniqueItems": True,
                "description": "Also return each page's content, in these formats (as scrape's format)."},
    "maxMs": {"type": "integer", "minimum": 1000, "maximum": 600_000, "default": 300_000,
              "description": "Limit for the whole crawl: 1000 to 600000. Default 300000."},
    "cursor": {"type": "string", "minLength": 1, "description": "Continue a crawl that stopped: the cursor of its result."},
})
