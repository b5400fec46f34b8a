"""The MCP server's quick tools against their peers, on the local test site, in the same run.

1. `scrape` (markdown) round trip through `/mcp` with the SDK's own client — a fresh session on a real worker's
   keeper, the page loaded and read, the session stopped — against `web action=fetch` of the same page (plain
   guarded HTTP, the same markdown converter), and against a bare Playwright run of the same work (a Chromium
   launched, the page loaded, `page.content()` read, the browser closed): p50 / p95 over --calls calls each,
   and the ratios.
2. A smoke test's wall time on the local site's home page through `/mcp` (a recorded session of its own,
   load, axe-core, the links, the console, the report), against the same checks in a bare Playwright run.

    .venv/bin/python tests/bench/mcp_bench.py [--calls 5]

It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL says so) and uses the configured
broker (filesystem, or Redis when CELERY_BROKER_URL says so). Prints one line per figure.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

import django  # noqa: E402

django.setup()

import anyio  # noqa: E402
import httpx  # noqa: E402
import httpx2  # noqa: E402
import uvicorn  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from django.contrib.auth import get_user_model  # noqa: E402

from accounts.models import Account, ApiToken, Membership, Role, hash_token  # noqa: E402
from browsing.smoke import axe_source  # noqa: E402
from foldrun.asgi import App  # noqa: E402
from foldrun.mcp import registry  # noqa: E402
from foldrun.web import WebTool  # noqa: E402
from foldrun.web.browse import CHROMIUM, LAUNCH_ARGS  # noqa: E402
from tests.bench.worker import start_worker  # noqa: E402
from tests.fakes.mcp_site import arena  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def line(name: str, values: list[float]) -> str:
    return (
        f"{name}: p50 {statistics.median(values) * 1000:.0f} ms, p95 {pct(values, 0.95) * 1000:.0f} ms "
        f"({len(values)} calls)"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve() -> tuple[uvicorn.Server, str]:
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(App(), host="127.0.0.1", port=port, lifespan="on", log_level="warning", ws="none")
    )
    threading.Thread(target=server.run, name="bench-mcp", daemon=True).start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise SystemExit("the MCP server did not start")
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}/mcp"


class Bench:
    """What a figure needs: the /mcp URL, a token, the local site, and a way to call a tool and time it."""

    def __init__(self, url: str, token: str, site_url: str) -> None:
        self.url, self.token, self.site_url = url, token, site_url

    def timed_calls(self, name: str, arguments: dict, calls: int, *, warm: int = 1) -> list[float]:
        """Each call's round trip through one connected MCP client session (after `warm` untimed calls)."""

        async def go() -> list[float]:
            headers = {"Authorization": f"Bearer {self.token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=600.0)) as http,
                streamable_http_client(self.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                times = []
                for n in range(warm + calls):
                    started = time.perf_counter()
                    result = await session.call_tool(name, arguments)
                    if result.is_error:
                        raise SystemExit(f"{name} failed: {result.content[0].text}")
                    if n >= warm:
                        times.append(time.perf_counter() - started)
                return times

        return anyio.run(go)


def scrape_figures(bench: Bench, calls: int) -> None:
    page = bench.site_url + "/pricing/"
    scrape = bench.timed_calls("scrape", {"url": page, "format": ["markdown"]}, calls)
    with httpx.Client() as http, tempfile.TemporaryDirectory() as folder:
        tool = WebTool({}, http=http, sandbox=Path(folder), allow_private=True, test_mode=False)
        tool.call({"action": "fetch", "url": page})
        fetch = []
        for _ in range(calls):
            started = time.perf_counter()
            tool.call({"action": "fetch", "url": page})
            fetch.append(time.perf_counter() - started)
    bare = []
    with sync_playwright() as playwright:
        for _ in range(calls):
            started = time.perf_counter()
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
            tab = browser.new_page()
            tab.goto(page, wait_until="load")
            tab.content()
            browser.close()
            bare.append(time.perf_counter() - started)
    print(line("scrape through /mcp (fresh session each)", scrape))
    print(line("web action=fetch, same page", fetch))
    print(line("bare Playwright: launch, load, read, close", bare))
    print(
        f"ratio scrape/fetch: {statistics.median(scrape) / statistics.median(fetch):.0f}x; "
        f"scrape/bare browser: {statistics.median(scrape) / statistics.median(bare):.2f}x"
    )


def smoke_test_figure(bench: Bench, calls: int) -> None:
    """A smoke test's wall time on the local site's home page (load, axe-core, its links, the console, the
    report; a recorded session of its own, started and stopped) against the same checks in a bare Playwright
    run: a Chromium launched, the page loaded, axe.min.js injected and run, each same-origin link fetched."""
    if "smoke_test" not in {tool.name for tool in registry.fixed_tools()}:
        print("smoke_test: not registered on this server yet, no figure")
        return
    page = bench.site_url + "/"
    runs = max(1, calls // 2)
    smoke = bench.timed_calls("smoke_test", {"url": page, "waitSeconds": 90}, runs, warm=0)
    axe = axe_source()
    bare = []
    with sync_playwright() as playwright, httpx.Client() as http:
        for _ in range(runs):
            started = time.perf_counter()
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
            tab = browser.new_page()
            tab.goto(page, wait_until="load")
            tab.add_script_tag(content=axe)
            tab.evaluate("() => axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}})")
            hrefs = tab.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
            for href in dict.fromkeys(h for h in hrefs if h.startswith(bench.site_url)):
                http.head(href)
            browser.close()
            bare.append(time.perf_counter() - started)
    print(line("smoke_test through /mcp (recorded session, home page)", smoke))
    print(line("bare Playwright: launch, load, axe, links, close", bare))
    print(f"ratio smoke_test/bare: {statistics.median(smoke) / statistics.median(bare):.2f}x")


# Each figure: fn(bench, calls). Add a tool's figure here.
FIGURES: list[Callable[[Bench, int], None]] = [scrape_figures, smoke_test_figure]


def main() -> None:
    for name in ("httpx2", "httpx", "mcp", "foldrun.mcp"):  # one line per figure, not one per request
        logging.getLogger(name).setLevel(logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    setup_test_environment()
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    account = Account.objects.create(name="Bench")
    user = get_user_model().objects.create_user(username="bench", email="bench@example.com")
    Membership.objects.create(account=account, user=user, role=Role.OWNER)
    raw = ApiToken.mint()
    ApiToken.objects.create(user=user, account=account, name="bench", token_hash=hash_token(raw), hint=raw[:8])
    log = Path(os.environ.get("FOLDRUN_DATA_DIR", tempfile.gettempdir())) / "mcp-bench-worker.log"
    worker = start_worker(2, log, level="warning", settle=0.5)
    server, url = serve()
    try:
        with arena() as site:
            bench = Bench(url, raw, site.url)
            for figure in FIGURES:
                figure(bench, args.calls)
    finally:
        server.should_exit = True
        worker.terminate()
        worker.wait(timeout=20)


if __name__ == "__main__":
    main()
