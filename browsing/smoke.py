"""The `smoke-uat` skill's checks on the page: what runs inside an attach, with no ORM call.

Playwright's sync API holds an event loop in the thread for the length of an attach, so these functions
take a `Page`, return plain data, and leave every write to `runs.skill_runs`, after the attach.

- `start_checks`: the start page loads, basic accessibility with axe-core (axe.min.js from var/axe-npm,
  injected into the page), and the start page's same-origin links collected for checking.
- `check_links`: each link fetched through foldrun.net's guarded client (the address it connects to is
  checked), a status of 400 or more, or no answer, is broken.
- `final_checks`: `expectText`, `expectUrl`, `expectNoText` on the page the steps left.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from foldrun import net
from foldrun.web.browse.assets import AXE_MISSING, axe_source, inject_axe

from .attach import navigate
from .errors import SessionError

# Basic accessibility: the WCAG A and AA rules; only serious and critical findings fail the check.
AXE_TAGS = ["wcag2a", "wcag2aa"]
FAILING_IMPACTS = ("serious", "critical")
LOAD_TIMEOUT_MS = 30_000
LINK_TIMEOUT = 10.0


class Watch:
    """The page's console errors, uncaught errors and failed requests while an attach lasts."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[dict] = []
        self.failed: list[dict] = []
        self._handlers = [
            ("console", self._console),
            ("pageerror", self._uncaught),
            ("requestfailed", self._request_failed),
            ("response", self._response),
        ]
        for event, handler in self._handlers:
            page.on(event, handler)

    def _console(self, message: Any) -> None:
        if message.type == "error" and not str((message.location or {}).get("url", "")).endswith("/favicon.ico"):
            self.console.append({"level": "error", "text": message.text[:2000], "url": self.page.url})

    def _uncaught(self, error: Any) -> None:
        self.console.append(
            {"level": "error", "text": f"uncaught: {str(error).splitlines()[0][:2000]}", "url": self.page.url}
        )

    def _request_failed(self, request: Any) -> None:
        if request.failure and "ERR_ABORTED" not in str(request.failure):
            self.failed.append(
                {
                    "url": request.url[:2000],
                    "method": request.method,
                    "status": None,
                    "error": str(request.failure)[:300],
                }
            )

    def _response(self, response: Any) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            self.failed.append(
                {
                    "url": response.url[:2000],
                    "method": response.request.method,
                    "status": response.status,
                    "error": None,
                }
            )

    def stop(self) -> dict[str, list[dict]]:
        for event, handler in self._handlers:
            try:
                self.page.remove_listener(event, handler)
            except Exception:  # noqa: BLE001 - the page closed
                pass
        return {"console": self.console, "failed": self.failed}


def start_checks(page: Any, url: str, max_links: int) -> dict[str, Any]:
    """Load the start page, run axe on it, collect its same-origin links. Plain data for the report."""
    watch = Watch(page)
    out: dict[str, Any] = {"load": None, "a11y": None, "links": []}
    started = time.monotonic()
    try:
        response = navigate(page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        status = response.status if response is not None else None
        loaded = status is None or status < 400
        out["load"] = {
            "ok": loaded,
            "status": status,
            "ms": _ms(started),
            "error": None if loaded else f"The start page answered HTTP {status}.",
        }
    except SessionError as exc:
        out["load"] = {"ok": False, "status": None, "ms": _ms(started), "error": exc.message, "code": exc.code}
    except Exception as exc:  # noqa: BLE001 - Playwright's reason, first line only
        out["load"] = {
            "ok": False,
            "status": None,
            "ms": _ms(started),
            "error": f"The start page did not load: {str(exc).splitlines()[0][:300]}",
        }
    if out["load"]["ok"]:
        out["a11y"] = _axe(page)
        if max_links:
            out["links"] = _links(page, max_links)
        out["start_screenshot"] = None
    out.update(watch.stop())
    return out


def _axe(page: Any) -> dict[str, Any]:
    started = time.monotonic()
    if axe_source() is None:
        return {"ok": False, "ran": False, "ms": 0, "violations": [], "error": f"{AXE_MISSING}."}
    try:
        inject_axe(page)
        result = page.evaluate(
            "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", AXE_TAGS
        )
    except Exception as exc:  # noqa: BLE001 - a page that refuses scripts (CSP) or navigates away
        return {
            "ok": False,
            "ran": False,
            "ms": _ms(started),
            "violations": [],
            "error": f"The accessibility check did not run: {str(exc).splitlines()[0][:300]}",
        }
    violations = [
        {
            "id": v.get("id"),
            "impact": v.get("impact"),
            "help": str(v.get("help") or "")[:300],
            "nodes": len(v.get("nodes") or []),
        }
        for v in result.get("violations") or []
    ]
    serious = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    error = None
    if serious:
        error = f"{len(serious)} serious accessibility issue{'s' if len(serious) != 1 else ''}: " + "; ".join(
            f"{v['help']} ({v['id']})" for v in serious[:3]
        )
    return {"ok": not serious, "ran": True, "ms": _ms(started), "violations": violations, "error": error}


def _links(page: Any, limit: int) -> list[str]:
    """The start page's links to its own origin, each once, in page order."""
    origin = urlsplit(page.url)
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    seen: list[str] = []
    for href in hrefs:
        absolute = urldefrag(urljoin(page.url, str(href or "")))[0]
        parts = urlsplit(absolute)
        if parts.scheme not in ("http", "https") or (parts.scheme, parts.netloc) != (origin.scheme, origin.netloc):
            continue
        if absolute not in seen:
            seen.append(absolute)
        if len(seen) >= limit:
            break
    return seen


def check_links(links: list[str]) -> list[dict[str, Any]]:
    """Each link's status through the guarded client (HEAD, then GET where HEAD is not answered)."""
    client = net.client("web", deadline=LINK_TIMEOUT)
    results = []
    for link in links:
        started = time.monotonic()
        try:
            response = client.head(link, follow_redirects=True, timeout=LINK_TIMEOUT)
            if response.status_code in (405, 501):
                response = client.get(link, follow_redirects=True, timeout=LINK_TIMEOUT)
            status, error = response.status_code, None
            if status >= 400:
                error = f"{link} answered HTTP {status}"
        except Exception as exc:  # noqa: BLE001 - refused by the guard, no answer: the link is broken
            status, error = (
                None,
                f"{link} did not answer: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}",
            )
        results.append({"url": link, "status": status, "ok": error is None, "ms": _ms(started), "error": error})
    return results


def final_checks(
    page: Any, expect_text: str | None, expect_url: str | None, expect_no_text: str | None
) -> dict[str, Any]:
    """The page the steps left: its address, its text, and each expectation asked for."""
    watch = Watch(page)
    try:
        page.wait_for_load_state("load", timeout=5000)
    except Exception:  # noqa: BLE001 - a page still busy: read it as it is
        pass
    final_url = page.url
    try:
        body = page.inner_text("body", timeout=5000)
    except Exception:  # noqa: BLE001 - the page closed or never settled: no text, and the checks say so
        body = ""
    checks: dict[str, dict | None] = {"expectText": None, "expectUrl": None, "expectNoText": None}
    if expect_text:
        found = expect_text in body
        checks["expectText"] = {
            "ok": found,
            "error": None if found else f'Expected text "{expect_text}" is not on the page.',
        }
    if expect_url:
        found = expect_url in final_url
        checks["expectUrl"] = {
            "ok": found,
            "error": None if found else f'The page address {final_url} does not contain "{expect_url}".',
        }
    if expect_no_text:
        found = expect_no_text in body
        checks["expectNoText"] = {
            "ok": not found,
            "error": None if not found else f'Text "{expect_no_text}" is on the page and should not be.',
        }
    screenshot = None
    if any(c is not None and not c["ok"] for c in checks.values()):
        try:
            screenshot = page.screenshot(type="png")
        except Exception:  # noqa: BLE001 - the page went away: the checks stand without a picture
            screenshot = None
    return {"finalUrl": final_url, "checks": checks, "screenshot": screenshot, **watch.stop()}


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
