"""web action=browse through the account's pool, against @playwright/mcp on the same page, in the same run.

1. Warm per-call latency: a browse call (navigate + numbered snapshot, mode=aria) on a local page through a
   pool server (Playwright's run-server), after two warm-up calls, p50/p95 over --calls calls — against
   @playwright/mcp's browser_navigate (which navigates and snapshots) on the same page through its stdio MCP
   server (pinned in scripts/bootstrap: var/bench-npm). Target: at most 1.0×. Both sides pause --gap seconds
   before each call (default 1.0): a step's calls come a model turn apart, and the pool makes the next call's
   context and closes the last one's in that turn (spare.py) — back to back, that work lands inside the next
   call (measured 1.6 s p50 back to back, 0.28 s with a 1.5 s gap, on a loaded 2-core machine).
2. A pool server's cold start: run-server up and listening, then the first call's browser on it.

    .venv/bin/python tests/bench/browse_bench.py [--calls 15]

Prints one line per figure; exits non-zero when the warm ratio misses its target.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MCP_CLI = ROOT / "var" / "bench-npm" / "node_modules" / "@playwright" / "mcp" / "cli.js"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def reap(process: subprocess.Popen) -> None:
    """Stop the cold-start server and everything it started (its own session), wait for it, close its pipe:
    no orphaned node process or zombie is left behind the benchmark."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


def pool_calls(url: str, calls: int, gap: float) -> tuple[list[float], float, float]:
    from foldrun.web.browse import servers
    from foldrun.web.tool import WebTool

    started = time.monotonic()
    process, _ws = servers.start_server()
    server_up = time.monotonic() - started
    reap(process)
    with httpx.Client() as http:
        tool = WebTool({}, http=http, sandbox=Path(tempfile.mkdtemp()), allow_private=True, test_mode=False,
                       pod_account="acc_bench")
        try:
            first = time.monotonic()
            tool.call({"action": "browse", "url": url, "mode": "aria"})
            first_call = time.monotonic() - first
            tool.call({"action": "browse", "url": url, "mode": "aria"})
            times = []
            for _ in range(calls):
                time.sleep(gap)
                t = time.monotonic()
                tool.call({"action": "browse", "url": url, "mode": "aria"})
                times.append(time.monotonic() - t)
        finally:
            tool.close()
            servers.POOL.stop()
    return times, server_up, first_call


async def mcp_calls(url: str, calls: int, gap: float) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command="node", args=[str(MCP_CLI), "--headless", "--isolated", "--browser",
                                                         "chromium", "--executable-path", "/usr/bin/chromium",
                                                         "--no-sandbox"],
                                    cwd=tempfile.mkdtemp())  # its .playwright-mcp/ output lands there
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(2):
            await session.call_tool("browser_navigate", {"url": url})
        times = []
        for _ in range(calls):
            await asyncio.sleep(gap)
            t = time.monotonic()
            answer = await session.call_tool("browser_navigate", {"url": url})
            times.append(time.monotonic() - t)
            assert not answer.is_error, answer
        return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between calls, on both sides (a model turn)")
    options = parser.parse_args()
    from tests.web.fakes import Site

    with Site() as site:
        url = f"{site.url}/app"
        ours, server_up, first_call = pool_calls(url, options.calls, options.gap)
        if not MCP_CLI.is_file():
            print(f"@playwright/mcp is not installed at {MCP_CLI} (scripts/bootstrap installs it)")
            return 1
        theirs = asyncio.run(mcp_calls(url, options.calls, options.gap))
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"warm browse call, pool:        p50 {statistics.median(ours) * 1000:7.1f} ms   p95 {pct(ours, .95) * 1000:7.1f} ms")
    print(f"warm navigate, @playwright/mcp: p50 {statistics.median(theirs) * 1000:7.1f} ms   p95 {pct(theirs, .95) * 1000:7.1f} ms")
    print(f"ratio (pool / mcp, p50): {ratio:.2f}× (target ≤ 1.0×), {options.gap:g} s between calls on both sides")
    print(f"pool server cold start: {server_up * 1000:.0f} ms to listening; first call with its browser "
          f"{first_call * 1000:.0f} ms")
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")
    sys.exit(main())
