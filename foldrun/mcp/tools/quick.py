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

from ..call import McpCall
from ..quick import crawl as crawling
from ..quick import schemas, work
from ..quick.load import checked_url, session_body
from ..registry import mcp_tool
from ..results import ToolResult, ok_json

_FRESH = "Each call opens a fresh browser session of its own, so it never sees a page you are signed in to."


@mcp_tool(name="scrape", input_schema=schemas.SCRAPE, acts=True, description=(
    "Load a URL in a cloud browser and return its content as the browser rendered it: markdown by default, or "
    "any of html, cleaned_html, markdown and readability (the article alone). Also returns metadata (title, "
    "description, status code, language, word count) and the page's links, each marked internal or not; "
    "optionally its embedded media and third-party hosts (inventory) and the page itself as base64 "
    f"(screenshot, pdf, mhtml). {_FRESH}"))
def scrape(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
        data = work.scrape(page, url, args)
    return ok_json(data)


@mcp_tool(name="screenshot", input_schema=schemas.SCREENSHOT, acts=True, description=(
    "Load a URL and return a screenshot as an image: the whole page by default (fullPage), png, jpeg or "
    f"webp, with a quality for jpeg and webp. {_FRESH} It cannot show what a run_task left on its page."))
def screenshot(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    work.check_screenshot(args)
    with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
        return work.screenshot(page, url, args)


@mcp_tool(name="pdf", input_schema=schemas.PDF, acts=True, description=(
    "Load a URL and print it to PDF (A4, Letter or Legal; portrait or landscape; backgrounds printed by "
    f"default). The file comes back as the resource webagent://quick/pdf. {_FRESH}"))
def pdf(call: McpCall, args: dict[str, Any]) -> ToolResult:
    url = checked_url(args)
    with fresh_session(call.account, session_body(args), user=call.user) as (_session, page):
        return work.pdf(page, url, args)


@mcp_tool(name="crawl", input_schema=schemas.CRAWL, acts=True, description=(
    "Crawl from a URL and return the pages visited (url, depth, status, title, links found, ms), breadth "
    "first, within scope (the host by default), maxDepth and maxPages, obeying robots.txt unless "
    "respectRobots is false. A crawl stopped by maxPages or maxMs returns a cursor: call again with it to go "
    "on. Only crawl sites you own or may test."))
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
