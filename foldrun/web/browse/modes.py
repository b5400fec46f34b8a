"""How the page is read: `mode=` text, markdown, aria, network, diff, feed, a11y, vitals …"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .. import pages
from ..errors import WebToolError
from ..net import scrub_url
from .registry import MODES, built_modes, mode
from . import aria  # noqa: F401 - registers mode=aria before BUILT_MODES is read
from .steps.reading import keep_file, settle
from .. import fetch as plain
from .annotate import annotated
from .aria import flag
from . import audit, compare, react, walk, webmcp  # noqa: F401 - register the modes they hold before BUILT_MODES is read

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call


def save_captures(call: "Call") -> list[dict]:
    """The bodies the `capture` glob matched, saved under outputs/captures/."""
    saved = []
    for number, response in enumerate(call.captured, 1):
        try:
            body = response.body()
        except Exception:  # noqa: BLE001 - a response with no body (a redirect, a closed page)
            continue
        kind = (response.headers.get("content-type") or "").split(";")[0].strip()
        suffix = ".json" if "json" in kind else ".txt" if kind.startswith("text/") else ".bin"
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", urlsplit(response.url).path.strip("/"))[-60:] or "root"
        target = call.tool.sandbox / "outputs" / "captures" / f"{number:03d}-{stem}{suffix}"
        where = call.tool.write_file(target, body)
        saved.append(
            {
                "url": scrub_url(response.url),
                "status": response.status,
                "contentType": kind,
                "file": where,
                "text": body.decode("utf-8", errors="replace") if suffix != ".bin" else None,
            }
        )
    return saved


def feed_read(call: "Call", page: "Page") -> str:
    """The RSS, Atom or JSON feed: the URL itself when it is one, else the first linked, else the usual paths."""
    tool = call.tool
    candidates: list[str] = []
    main_type = str(call.main_response.get("contentType") or "").split(";")[0].strip().lower()
    if main_type and "html" not in main_type:
        candidates.append(page.url)
    else:
        meta = pages.meta_of(page.content(), page.url)
        candidates += [f["href"] for f in meta["feeds"]]
        origin = f"{urlsplit(page.url).scheme}://{urlsplit(page.url).netloc}"
        candidates += [origin + path for path in pages.FEED_PATHS]
    for url in dict.fromkeys(candidates):
        if call.host_refusal(url):
            continue
        got = plain.get(tool, url, tool.language)  # one plain read through the guarded client
        if got.error or got.status >= 400 or not got.is_text():
            continue
        items = pages.feed_items(got.text)
        if items is None:
            continue
        data = json.dumps({"feed": scrub_url(url), "items": items}, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "feed.json", data.encode())
        lines = [f"feed: {scrub_url(url)} ({len(items)} items)"]
        for item in items:
            lines.append(f"- {item.get('title') or '(untitled)'}" + (f" — {item['date']}" if item.get("date") else ""))
            if item.get("link"):
                lines.append(f"  {item['link']}")
        return "\n".join(lines)
    return (
        f"no feed: {scrub_url(page.url)} is not one, links none, and none of {', '.join(pages.FEED_PATHS)} answered one"
    )


_TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map(t => {
  let heading = null;
  for (let el = t.previousElementSibling; el; el = el.previousElementSibling) {
    if (/^H[1-6]$/.test(el.tagName)) { heading = el.innerText.trim(); break; }
  }
  const caption = t.caption ? t.caption.innerText.trim() : null;
  const rows = Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.innerText.trim()));
  const head = rows.length ? rows[0] : [];
  return {heading: caption || heading, rows: rows.slice(1).map(r => Object.fromEntries(head.map((h, i) => [h || String(i), r[i] ?? null])))};
})"""


_LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => ({text: a.innerText.trim(), href: a.href}))
  .filter(l => !l.href.startsWith('javascript:'))"""


@mode("capture", acts=False)
def read_capture(call: "Call", page: "Page", args: dict) -> str:
    if not args.get("capture"):
        raise WebToolError('browse: mode=capture needs capture=, a URL glob such as "**/api/*"')
    saved = call.saved_captures
    if not saved:
        return f"nothing the page fetched matched capture={args['capture']}"
    return "\n\n".join(
        f"=== {c['url']} ({c['status']}, {c['file']}) ===\n" + (c["text"] or "(binary)")[:6000] for c in saved
    )


@mode("feed", acts=False)
def read_feed(call: "Call", page: "Page", args: dict) -> str:
    return feed_read(call, page)


@mode("text", acts=False)
def read_text(call: "Call", page: "Page", args: dict) -> str:
    return page.inner_text("body")


@mode("html", acts=False)
def read_html(call: "Call", page: "Page", args: dict) -> str:
    return page.content()


@mode("markdown", acts=False)
def read_markdown(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    text = pages.to_markdown(page.content(), page.url)
    tool.write_file(tool.sandbox / "outputs" / "page.md", text.encode())
    return text


@mode("meta", acts=False)
def read_meta(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    meta = {"url": scrub_url(page.url), **pages.meta_of(page.content(), page.url)}
    data = json.dumps(meta, indent=1, ensure_ascii=False)
    tool.write_file(tool.sandbox / "outputs" / "meta.json", data.encode())
    return data


@mode("links", acts=False)
def read_links(call: "Call", page: "Page", args: dict) -> str:
    return pages.links_text(page.evaluate(_LINKS_JS))


@mode("table", acts=False)
def read_table(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    tables = page.evaluate(_TABLES_JS)
    data = json.dumps(tables, indent=1, ensure_ascii=False)
    tool.write_file(tool.sandbox / "outputs" / "tables.json", data.encode())
    return data if tables else "no tables on the page"


@mode("console", acts=False)
def read_console(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    data = json.dumps(call.console, indent=1, ensure_ascii=False)
    tool.write_file(tool.sandbox / "outputs" / "console.json", call.redact(data).encode())
    if not call.console:
        return "the page wrote nothing to its console"
    return "\n".join(f"[{m['level']}] {m['text']}" + (f" ({m['source']})" if m["source"] else "") for m in call.console)


@mode("network", acts=False)
def read_network(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    try:  # every request it made: let the last ones land before listing them
        page.wait_for_load_state("networkidle", timeout=3000)
    except Exception:  # noqa: BLE001 - a page that never idles is listed as it stands
        pass
    data = json.dumps({"page": call.main_response, "requests": call.network}, indent=1, ensure_ascii=False)
    tool.write_file(tool.sandbox / "outputs" / "network.json", data.encode())
    head = call.main_response
    lines = [f"{head.get('status')} {head.get('url')} ({head.get('contentType')})"]
    lines += [f"  redirect: {hop}" for hop in head.get("redirects") or []]
    lines += [f"  {k}: {v}" for k, v in (head.get("headers") or {}).items()]
    lines.append("")
    lines += [
        f"{r['status'] or '---'} {r['method']} {r['type']} {r['url']} "
        f"{r['bytes'] if r['bytes'] is not None else '?'} bytes {r['ms'] if r['ms'] is not None else '?'} ms"
        for r in call.network
    ]
    return "\n".join(lines)


@mode("screenshot", acts=False, capability="screenshot")
def read_screenshot(call: "Call", page: "Page", args: dict) -> str:
    if flag(args, "annotate"):
        settle(call, page)  # lazy parts in place before anything is measured
        return annotated(
            call,
            page,
            args.get("within"),
            lambda: keep_file(call, page, "screenshot", {"screenshot": "page", "settle": False}),
        )
    where = keep_file(call, page, "screenshot", {"screenshot": "page"})
    return f"{where} — the full page at {page.viewport_size['width']}px wide. Read {where} to see it."


@mode("pdf", acts=False, capability="pdf")
def read_pdf(call: "Call", page: "Page", args: dict) -> str:
    where = keep_file(call, page, "pdf", {"pdf": "page"})
    return f"{where} — the page printed to PDF."


BUILT_MODES: tuple[str, ...] = built_modes()


def read(call: "Call", page: "Page", mode: str, args: dict) -> str:
    """The page read the way `mode=` names (a built mode: the action checked it)."""
    return MODES[mode].handler(call, page, args)
