"""Benchmark: N authenticated API requests at once against a running web server (one started by ./scripts/start,
or tests/ops/test_the_web_server_answers_500_requests_at_once_from_a_bounded_pool.py's), each on its own
connection; prints how many were answered, how many with a 5xx, and the p50 and p95 of their times. Target
(issue 29 item 4): every request answered, none with a 5xx — a burst queues for the pool's connections.

    .venv/bin/python tests/bench/web_burst.py --url http://127.0.0.1:8000/api/workspaces/demo/runs \\
        --token "$FOLDRUN_API_TOKEN" [--requests 500]

A script, not a pytest test: it needs no Django, only the server's address and an API token.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx

NO_ANSWER = 599  # what a request that got no answer at all is counted as


async def fire(url: str, token: str, n: int) -> list[tuple[int, float]]:
    """`n` GETs of `url` at once, each on its own connection: (status, seconds) of each."""
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=120, limits=limits, headers={"Authorization": f"Bearer {token}"}) as http:

        async def one() -> tuple[int, float]:
            started = time.monotonic()
            try:
                answer = await http.get(url)
                return answer.status_code, time.monotonic() - started
            except httpx.HTTPError:
                return NO_ANSWER, time.monotonic() - started

        return list(await asyncio.gather(*(one() for _ in range(n))))


def summary(results: list[tuple[int, float]]) -> dict:
    seconds = sorted(s for _, s in results)
    statuses = [status for status, _ in results]
    return {
        "requests": len(results),
        "answered": sum(1 for s in statuses if s != NO_ANSWER),
        "5xx": sum(1 for s in statuses if s >= 500),
        "p50_ms": statistics.median(seconds) * 1000,
        "p95_ms": seconds[max(int(len(seconds) * 0.95) - 1, 0)] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    found = summary(asyncio.run(fire(args.url, args.token, args.requests)))
    print(
        f"{found['requests']} requests at once: {found['answered']} answered, {found['5xx']} with a 5xx, "
        f"p50 {found['p50_ms']:.0f} ms, p95 {found['p95_ms']:.0f} ms"
    )


if __name__ == "__main__":
    main()
