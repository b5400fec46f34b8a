"""What prompt caching saves a tool loop (issue 34, "Proven by"): a ten-turn tool loop with a 5,000-token fixed
prompt, run by the engine against the loopback provider whose prompt cache answers as Anthropic's API does
(tests/fakes/prompt_cache.py: a cache keyed by the prefix up to each `cache_control` breakpoint, 1,024 tokens
at least, five minutes), and the same loop against the same provider with its cache off. Target: the cached
loop's total input cost at most 0.35× the uncached loop's.

Input cost counts every prompt token as the provider bills it: read in full at the input price, written to
the cache at 1.25×, read from it at 0.1× (foldrun/providers/cost.py, claude-sonnet-4-5: $3, $3.75, $0.30 per
million). Output is the same on both sides and left out of the ratio; the totals with it are printed too.

A script, not a pytest test; no database, no worker:

    .venv/bin/python tests/bench/cost_bench.py [--turns 10] [--prompt-tokens 5000]
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from foldrun import net  # noqa: E402
from foldrun.contract import Desk  # noqa: E402
from foldrun.engine import StepRequest, run_step  # noqa: E402
from foldrun.engine.local import LocalHost  # noqa: E402
from foldrun.providers.cost import MILLION, cache_rates  # noqa: E402
from tests.fakes.prompt_cache import PromptCache, tokens  # noqa: E402
from tests.fakes.providers import FakeProvider  # noqa: E402
from tests.runs.engine_helpers import SECRETS, agent_md  # noqa: E402

TARGET = Decimal("0.35")
PROVIDER = {"name": "anthropic", "model": "claude-sonnet-4-5"}
SENTENCE = "Rank each page of the desk by how far it moved this week, and say why in one line. "
NOTE = "Week 49: the pricing page rose four places; the changelog fell two; the docs index held. " * 8


def fixed_prompt(size: int) -> str:
    """An agent body of about `size` tokens, counted as the stand-in counts them."""
    text = SENTENCE
    while tokens({"type": "text", "text": text}) < size:
        text += SENTENCE
    return text


def loop(fake: FakeProvider, turns: int, prompt: str) -> list[dict]:
    """One step of `turns` tool calls and a closing reply; its model requests' trace lines."""
    files = {
        "agents/ranker/agent.md": agent_md("ranker", fake, tools="[read]", body=prompt),
        **{f"knowledge/week-{n}.md": f"# Week {n}\n\n{NOTE}\n" for n in range(turns)},
    }
    for n in range(turns):
        fake.reply_tool_use("Read", {"path": f"knowledge/week-{n}.md"}, usage=(0, 60))
    fake.reply_text("GOOD ranked: pricing up four, changelog down two.", usage=(0, 40))
    host = LocalHost(SECRETS)
    request = StepRequest(run_id="bench", label="1", agent="ranker", task="Rank this week's pages.")
    result = run_step(Desk(files=files, library={}), request, host)
    if result.status != "completed":
        raise SystemExit(f"the loop did not complete: {result.error}")
    return [data for kind, data in host.events if kind == "model_request"]


def input_cost(requests: list[dict]) -> Decimal:
    rates = cache_rates(PROVIDER)
    assert rates is not None
    total = sum(r["input_tokens"] * rates.input + r["cache_write_tokens"] * rates.cache_write for r in requests) + sum(
        r["cache_read_tokens"] * rates.cache_read for r in requests
    )
    return Decimal(total) / MILLION


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--prompt-tokens", type=int, default=5000)
    args = parser.parse_args()
    net.configure(allow_private=True)  # the stand-in listens on loopback, as the tests' host allows
    prompt = fixed_prompt(args.prompt_tokens)
    sides: dict[str, list[dict]] = {}
    for side, cache in (("cached", PromptCache()), ("uncached", PromptCache(min_tokens=10**12))):
        with FakeProvider() as fake:
            fake.prompt_cache = cache
            sides[side] = loop(fake, args.turns, prompt)
    cached, uncached = sides["cached"], sides["uncached"]
    print(
        f"{args.turns}-turn tool loop, {tokens({'type': 'text', 'text': prompt}):,}-token fixed prompt, claude-sonnet-4-5"
    )
    print(f"{'request':>7} {'input':>8} {'read':>8} {'written':>8} {'input $':>10} {'uncached $':>11}")
    for n, (mine, theirs) in enumerate(zip(cached, uncached), 1):
        print(
            f"{n:>7} {mine['input_tokens']:>8,} {mine['cache_read_tokens']:>8,} {mine['cache_write_tokens']:>8,} "
            f"{input_cost([mine]):>10.6f} {input_cost([theirs]):>11.6f}"
        )
    prompt_cached = sum(r["input_tokens"] + r["cache_read_tokens"] + r["cache_write_tokens"] for r in cached)
    prompt_uncached = sum(r["input_tokens"] for r in uncached)
    assert prompt_cached == prompt_uncached, "both loops carried the same prompt tokens"
    spent, full = input_cost(cached), input_cost(uncached)
    ratio = spent / full
    read = sum(r["cache_read_tokens"] for r in cached)
    print(f"prompt tokens: {prompt_cached:,} on each side; {read:,} read from the cache ({read / prompt_cached:.1%})")
    print(f"input cost: cached ${spent:.6f}, uncached ${full:.6f} — ratio {ratio:.3f} (target at most {TARGET})")
    with_output = sum(Decimal(r["cost_usd"]) for r in cached), sum(Decimal(r["cost_usd"]) for r in uncached)
    print(f"whole cost with output: cached ${with_output[0]:.6f}, uncached ${with_output[1]:.6f}")
    print("PASS" if ratio <= TARGET else "FAIL")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
