"""The quick tools — scrape, screenshot, pdf, crawl: each loads a URL in a fresh session of its own.

A session is opened for the call (`browsing.attach.fresh_session`: the account's
pool, its capacity rules, the guard proxy), its page does the tool's work
(foldrun/mcp/quick/), and it is stopped when the call ends, whatever happened —
so a quick tool never sees a page the caller is signed in to, and leaves
nothing running. The arguments are checked before a session is opened, so bad
input costs no browser.
"""

from __future__ import annotations

from typing import Any

from browsing.attach import fresh_session
from browsing.options import BLOCKABLE, ENGINES, MAX_URL

from ..call import McpCall
from ..quick import crawl as crawling
from ..quick import work
from ..quick.load import DEFAULT_TIMEOUT_MS, MAX_WAIT_TEXT, TIMEOUT_MS, WAIT_UNTIL, checked_url, session_body
from ..quick.read import DEFAULT_FORMATS, FORMATS
from ..registry import mcp_tool
from ..results import ToolResult, ok_json
from .sessions import CREATE_SCHEMA


# -- the input schemas, as the spec's tables give them (names, types, ranges, defaults) ------------------


def _url(what: str) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_URL,
        "description": f"{what}: an http or https URL, at most {MAX_URL} characters.",
    }


# "Same meaning as in create_session": its own schema's entries, handed to the tool's fresh session.
_CREATE = CREATE_SCHEMA["properties"]
SESSION_PROPERTIES: dict[str, Any] = {
    "engine": {"enum": list(ENGINES), "description": "The browser engine of the session. Default chromium."},
    "device": _CREATE["device"],
    "viewport": _CREATE["viewport"],
    "block": {
        "type": "array",
        "items": {"enum": list(BLOCKABLE)},
        "uniqueItems": True,
        "description": "Kinds of resource the browser does not load.",
    },
    "allowHosts": _CREATE["allowHosts"],
    "proxyUrl": _CREATE["proxyUrl"],
}

WAIT_PROPERTIES: dict[str, Any] = {
    "waitUntil": {
        "enum": list(WAIT_UNTIL),
        "default": "load",
        "description": "When the page counts as loaded. Default load.",
    },
    "waitForText": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_WAIT_TEXT,
        "description": f"Also wait until this text is on the page. At most {MAX_WAIT_TEXT} characters.",
    },
    "timeoutMs": {
        "type": "integer",
        "minimum": TIMEOUT_MS[0],
        "maximum": TIMEOUT_MS[1],
        "default": DEFAULT_TIMEOUT_MS,
        "description": f"How long the page may take to load, and the text to appear. "
        f"{TIMEOUT_MS[0]} to {TIMEOUT_MS[1]}. Default {DEFAULT_TIMEOUT_MS}.",
    },
}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": ["url"], "additionalProperties": False}


SCRAPE_SCHEMA = _object(
    {
        "url": _url("The page"),
        "format": {
            "type": "array",
            "items": {"enum": list(FORMATS)},
            "minItems": 1,
            "uniqueItems": True,
            "default": DEFAULT_FORMATS,
            "description": 'Any of html, cleaned_html, markdown, readability. Default ["markdown"].',
        },
        **WAIT_PROPERTIES,
        "screenshot": {"type": "boolean", "default": False, "description": "Also return a full-page PNG, as base64."},
        "pdf": {"type": "boolean", "default": False, "description": "Also return the page as an A4 PDF, as base64."},
        "mhtml": {
            "type": "boolean",
            "default": False,
            "description": "Also return the page and what it loaded as one MHTML archive, as base64.",
        },
        "inventory": {
            "type": "boolean",
            "default": False,
            "description": "Also list the embedded media and the third-party hosts the page uses.",
        },
        **SESSION_PROPERTIES,
    }
)

SCREENSHOT_SCHEMA = _object(
    {
        "url": _url("The page"),
        "fullPage": {
            "type": "boolean",
            "default": True,
            "description": "The whole page, not only the window. Default true.",
        },
        "format": {"enum": ["png", "jpeg", "webp"], "default": "png", "description": "png, jpeg or webp. Default png."},
        "quality": {"type": "integer", "minimum": 0, "maximum": 100, "description": "0 to 100, for jpeg and webp."},
        **WAIT_PROPERTIES,
        **SESSION_PROPERTIES,
    }
)

PDF_SCHEMA = _object(
    {
        "url": _url("The page"),
        "paper": {
            "enum": ["A4", "Letter", "Legal"],
            "default": "A4",
            "description": "A4, Letter or Legal. Default A4.",
        },
        "landscape": {"type": "boolean", "default": False, "description": "Default false."},
        "printBackground": {
            "type": "boolean",
            "default": True,
            "description": "Print background colours and images. Default true.",
        },
        **WAIT_PROPERTIES,
        **SESSION_PROPERTIES,
    }
)

_PATTERNS = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 500}, "maxItems": 50}

CRAWL_SCHEMA = _object(
    {
        "url": _url("Where to start"),
        "scope": {
            "oneOf": [
                {"enum": ["host", "subdomains"]},
                {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 253},
                    "minItems": 1,
                    "maxItems": 20,
                },
            ],
            "default": "host",
            "description": "host (default): the start URL's host; subdomains: it and its subdomains; "
            "or a list of up to 20 hosts (*.example.com for its subdomains).",
        },
        "include": {
            **_PATTERNS,
            "description": "Only crawl URLs matching one of these globs (a pattern starting "
            "with / is matched against the path). Up to 50.",
        },
        "exclude": {**_PATTERNS, "description": "Never crawl URLs matching one of these globs. Up to 50."},
        "maxPages": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100,
            "default": 25,
            "description": "1 to 100. Default 25.",
        },
        "maxDepth": {
            "type": "integer",
            "minimum": 0,
            "maximum": 5,
            "default": 2,
            "description": "Links followed from the start URL: 0 to 5. Default 2.",
        },
        "delayMs": {
            "type": "integer",
            "minimum": 0,
            "maximum": 10_000,
            "default": 500,
            "description": "Pause between pages: 0 to 10000. Default 500.",
        },
        "respectRobots": {
            "type": "boolean",
            "default": True,
            "description": "Obey the site's robots.txt. Default true.",
        },
        "sitemap": {
            "type": "boolean",
            "default": False,
            "description": "Also crawl the pages the site's sitemaps list. Default false.",
        },
        "content": {
            "type": "array",
            "items": {"enum": list(FORMATS)},
            "uniqueItems": True,
            "description": "Also return each page's content, in these formats (as scrape's format).",
        },
        "maxMs": {
            "type": "integer",
            "minimum": 1000,
            "maximum": 600_000,
            "default": 300_000,
            "description": "Limit for the whole crawl: 1000 to 600000. Default 300000.",
        },
        "cursor": {
            "type": "string",
            "minLength": 1,
            "description": "Continue a crawl that stopped: the cursor of its result.",
        },
    }
)


_FRESH = "Each call opens a fresh browser session of its own, so it never sees a page you are signed in to."


@mcp_tool(
    name="scrape",
    input_schema=SCRAPE_SCHEMA,
    acts=True,
    description=(
        "Load a URL in a cloud browser and return its content as the browser rendered it: markdown by default, or "
        "any of html, cleaned_html, markdown and readability (the article alone). Also returns metadata (title, "
        "description, status code, language, word count) and the page's links, each marked internal or not; "
        "optionally its embedded media and third-party hosts (inventory) and the page itself as base64 "
        f"(screenshot, pdf, mhtml). {_FRESH}"
    ),
)
def scrape(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
        data = work.scrape(page, url, args)
    return ok_json(data)


@mcp_tool(
    name="screenshot",
    input_schema=SCREENSHOT_SCHEMA,
    acts=True,
    description=(
        "Load a URL and return a screenshot as an image: the whole page by default (fullPage), png, jpeg or "
        f"webp, with a quality for jpeg and webp. {_FRESH} It cannot show what a run_task left on its page."
    ),
)
def screenshot(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    work.check_screenshot(args)
    with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
        return work.screenshot(page, url, args)


@mcp_tool(
    name="pdf",
    input_schema=PDF_SCHEMA,
    acts=True,
    description=(
        "Load a URL and print it to PDF (A4, Letter or Legal; portrait or landscape; backgrounds printed by "
        f"default). The file comes back as the resource webagent://quick/pdf. {_FRESH}"
    ),
)
def pdf(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
        return work.pdf(page, url, args)


@mcp_tool(
    name="crawl",
    input_schema=CRAWL_SCHEMA,
    acts=True,
    description=(
        "Crawl from a URL and return the pages visited (url, depth, status, title, links found, ms), breadth "
        "first, within scope (the host by default), maxDepth and maxPages, obeying robots.txt unless "
        "respectRobots is false. A crawl stopped by maxPages or maxMs returns a cursor: call again with it to go "
        "on. Only crawl sites you own or may test."
    ),
)
def crawl(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    crawling.check_scope(args)
    state = crawling.read_cursor(args["cursor"], url, call.account.pk) if args.get("cursor") else None
    job = crawling.Crawl(crawling.Plan.of(url, args), call.account.pk, state)
    job.prepare()  # robots.txt and the sitemap need no browser; a site closed to crawlers opens none
    if job.queue:
        with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
            job.visit(page)
    return ok_json(job.result())
