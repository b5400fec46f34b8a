"""`web action=fetch`: one plain HTTP request per URL, the page itself back.

Modes: markdown (the default), text, html, meta, links, raw. A page that
builds itself with JavaScript is named as such with `browse` to call instead,
the url and mode carried over, rather than an empty shell that reads as "no
content".
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import httpx

from . import pages
from .body import USER_AGENT, Body
from foldrun import net

from .errors import WebToolError
from .net import NoSuchHost, PrivateAddress, fetch_client, scrub_url
from .providers import fetch_via
from .shapes import check_url

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

FETCH_MODES = ("markdown", "text", "html", "meta", "links", "raw")
MAX_URLS = 20
MAX_BYTES = 10 * 1024 * 1024  # what one response may be before it is cut
MAX_OUTPUT_CHARS = 100_000  # what one page may put in front of the model
MAX_REDIRECTS = 8
# fetch mode -> the browse mode that reads the same thing once JavaScript has run.
BROWSE_MODE_FOR = {"markdown": "markdown", "text": "text", "html": "html", "links": "links", "meta": "meta"}


@dataclass
class Fetched(Body):
    url: str  # as asked (scrubbed)
    final_url: str = ""  # after redirects (scrubbed)
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    truncated: bool = False
    seconds: float = 0.0
    redirects: list[str] = field(default_factory=list)
    error: str | None = None


def get(tool: "WebTool", url: str, language: str) -> Fetched:
    """One GET, following redirects hop by hop (each hop meets the connect-time guard)."""
    shown = scrub_url(url)
    result = Fetched(url=shown)
    client = fetch_client(tool.allow_private)
    headers = {
        "User-Agent": USER_AGENT,
        "Accept-Language": accept_language(language),
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    }
    started = time.monotonic()
    current = url
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            parts = urlsplit(current)
            auth = None
            if parts.username is not None:  # credentials in the URL go as basic auth, never echoed
                from urllib.parse import unquote

                auth = (unquote(parts.username), unquote(parts.password or ""))
                current = scrub_url(current)
            with client.stream("GET", current, headers=headers, auth=auth, timeout=tool.fetch_timeout) as response:
                if response.is_redirect and response.headers.get("location"):
                    nxt = urljoin(current, response.headers["location"])
                    if urlsplit(nxt).scheme not in ("http", "https"):
                        result.error = (
                            f"{shown}: redirected to a {urlsplit(nxt).scheme}: address, which fetch does not read"
                        )
                        return result
                    result.redirects.append(f"{response.status_code} {scrub_url(nxt)}")
                    current = nxt
                    continue
                result.status = response.status_code
                result.content_type = response.headers.get("content-type", "")
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_BYTES:
                        result.truncated = True
                        break
                    if time.monotonic() - started > tool.fetch_timeout:
                        # a page that never finishes: said, and nothing half-read is handed on as the page
                        result.error = f"{shown}: did not finish within {tool.fetch_timeout:g}s, so it was not read"
                        return result
                result.body = b"".join(chunks)[:MAX_BYTES]
                result.final_url = scrub_url(str(response.url))
                break
        else:
            result.error = f"{shown}: more than {MAX_REDIRECTS} redirects"
    except PrivateAddress as exc:
        result.error = f"{shown}: {exc}"
    except NoSuchHost as exc:
        result.error = f"{shown}: {exc}"
    except httpx.TimeoutException:
        result.error = f"{shown}: timed out after {tool.fetch_timeout:g}s"
    except httpx.HTTPError as exc:
        result.error = f"{shown}: {net.describe(exc)}"
    result.seconds = round(time.monotonic() - started, 3)
    return result


def accept_language(language: str) -> str:
    """`en-AU` → `en-AU,en;q=0.9`: the tag, then its language alone."""
    tag = language or "en"
    base = tag.split("-")[0]
    return tag if base == tag else f"{tag},{base};q=0.9"


def render(tool: "WebTool", page: Fetched, mode: str) -> tuple[str, bool]:
    """The page at the fidelity asked, and whether it is a JavaScript shell (the escalation signal)."""
    if page.error:
        return page.error, False
    if mode == "raw":
        return page.text if page.is_text() else _binary_note(page), False
    if not page.is_text():
        return _binary_note(page), False
    body = page.text
    if not body.strip():
        return f"{page.final_url or page.url} is empty: HTTP {page.status} with no body", False
    base = page.final_url or page.url
    if not page.is_html():
        if mode == "meta":
            return json.dumps(
                {"url": base, "status": page.status, "contentType": page.content_type, "bytes": len(page.body)},
                indent=1,
            ), False
        if mode == "links":
            return "not an HTML page: it has no links to list", False
        return body, False
    if mode in BROWSE_MODE_FOR and mode != "meta":
        why = pages.javascript_shell(body)
        if why:
            return shell_sentence(page.url, mode, why), True
    if mode == "markdown":
        return pages.to_markdown(body, base), False
    if mode == "text":
        return pages.to_text(body), False
    if mode == "html":
        return body, False
    if mode == "links":
        return pages.links_text(pages.links_of(body, base)), False
    meta = pages.meta_of(body, base)
    meta = {"url": base, "status": page.status, **meta}
    return json.dumps(meta, indent=1, ensure_ascii=False), False


def shell_sentence(url: str, mode: str, why: str) -> str:
    """What fetch says instead of an empty shell: the page builds itself with JavaScript — call browse."""
    return (
        f"{url} builds itself with JavaScript ({why}), so fetch got an empty shell, not the page. "
        f"Call web with action=browse, the same url and mode={BROWSE_MODE_FOR.get(mode, 'text')} "
        f"to read it as a browser renders it."
    )


def _binary_note(page: Fetched) -> str:
    kind = page.media_type or "binary"
    return (
        f"{page.final_url or page.url} is {kind} ({len(page.body):,} bytes), not a page to read as text; "
        f"fetch it with mode=raw and save= to keep the bytes"
    )


def run(tool: "WebTool", args: dict) -> str:
    """The whole `fetch` action. Preconditions: the action is allowed and this is not a test run."""
    mode = str(args.get("mode") or "markdown").strip().lower()
    if mode not in FETCH_MODES:
        raise WebToolError(f"fetch mode={mode} is not one of {', '.join(FETCH_MODES)}")
    urls = _urls(args)
    target = tool.save_target(args.get("save"))  # a bad path costs no fetch
    if target is not None and mode == "raw" and len(urls) > 1:
        raise WebToolError("save= with mode=raw keeps one page's bytes: give one url")
    language = str(args.get("language") or tool.language or "en")
    provider = tool.provider_for("fetch")
    if provider is not None:
        if mode in ("meta", "links", "raw"):
            tool.log(
                f"web fetch: mode={mode} is read directly, not through {provider['name']} — "
                f"a provider answers markdown, text and html"
            )
        else:
            if any(scrub_url(u) != u for u in urls):
                raise WebToolError(
                    f"a URL with a user name or password in it is not handed to {provider['name']}; "
                    f"leave web.fetch unset to read it directly"
                )
            return fetch_via(tool, provider, urls, mode, target)

    def one(url: str) -> tuple[Fetched, str, bool]:
        page = get(tool, url, language)
        text, shell = render(tool, page, mode)
        return page, text, shell

    if len(urls) == 1:
        results = [one(urls[0])]
    else:
        with ThreadPoolExecutor(max_workers=min(5, len(urls))) as pool:
            results = list(pool.map(one, urls))
    for page, _text, shell in results:
        tool.emit(
            {
                "event": "fetch",
                "url": page.url,
                "final_url": page.final_url or None,
                "status": page.status or None,
                "content_type": page.media_type or None,
                "bytes": len(page.body),
                "seconds": page.seconds,
                "mode": mode,
                "error": page.error,
                "javascript_shell": shell or None,
            }
        )
        if page.truncated:
            tool.log(f"web fetch: {page.url} was larger than {MAX_BYTES // (1024 * 1024)} MB and was cut there")
    if all(page.error for page, _t, _s in results):
        raise WebToolError("\n".join(page.error or "" for page, _t, _s in results))
    if len(results) == 1:
        page, text, _shell = results[0]
        if page.status >= 400:
            raise WebToolError(f"{page.url}: HTTP {page.status}\n{_cap(text, 4000)}")
        out = _cap(text, MAX_OUTPUT_CHARS)
        raw_bytes = page.body if mode == "raw" else None
    else:
        parts = []
        for page, text, _shell in results:
            head = f"=== {page.url}" + (f" (HTTP {page.status})" if page.status else "") + " ==="
            parts.append(f"{head}\n{_cap(text, MAX_OUTPUT_CHARS // len(results))}")
        out = "\n\n".join(parts)
        raw_bytes = None
    if target is not None:
        data = raw_bytes if raw_bytes is not None else out.encode("utf-8")
        where = tool.write_file(target, data)
        return f"saved {where} ({len(data):,} bytes) from " + ", ".join(p.url for p, _t, _s in results)
    return out


def _urls(args: dict) -> list[str]:
    single, many = args.get("url"), args.get("urls")
    if single and many:
        raise WebToolError("fetch takes url= (one page) or urls= (up to 20), not both")
    if many is not None:
        if isinstance(many, str):
            many = [u for u in many.replace(",", "\n").split() if u]
        if not isinstance(many, list) or not many:
            raise WebToolError("urls= must be a list of URLs")
        if len(many) > MAX_URLS:
            raise WebToolError(
                f"urls= takes at most {MAX_URLS} URLs (got {len(many)}); fan out with a flow step's each: for more"
            )
        return [check_url(u) for u in many]
    return [check_url(single)]


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n[cut at {limit:,} of {len(text):,} characters]"
