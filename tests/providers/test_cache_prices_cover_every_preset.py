"""Issue 34, item 5: cost.py prices cache writes and reads per preset, one row for every preset of the spec's
table (providers.md), and a response's cost counts its cache reads and writes at those prices."""

from __future__ import annotations

from decimal import Decimal

from foldrun.providers.cost import ANTHROPIC, CACHE_RULES, FULL, cache_rates, response_cost, uncached_cost
from tests.providers.test_presets_match_spec import SPEC_ROWS


def reply(model: str, *, input: int = 0, output: int = 0, read: int = 0, write: int = 0) -> dict:
    usage = {
        "input_tokens": input,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }
    return {"model": model, "usage": usage}


def test_every_preset_of_the_spec_has_a_cache_price_and_no_other_name_does():
    assert list(CACHE_RULES) == [row["name"].strip("`") for row in SPEC_ROWS]


def test_a_preset_the_spec_says_ignores_cache_control_is_billed_as_uncached_input():
    ignoring = [row["name"].strip("`") for row in SPEC_ROWS if "cache_control" in row["note"]]
    assert ignoring == ["deepseek", "ollama"]
    assert all(CACHE_RULES[name] is FULL for name in ignoring)


def test_anthropic_writes_at_one_and_a_quarter_and_reads_at_a_tenth_of_input():
    found = cache_rates({"name": "anthropic"}, "claude-sonnet-4-5")
    assert (found.input, found.output, found.cache_write, found.cache_read) == (
        Decimal("3"),
        Decimal("15"),
        Decimal("3.75"),
        Decimal("0.3"),
    )
    assert (ANTHROPIC.write, ANTHROPIC.read) == (Decimal("1.25"), Decimal("0.1"))


def test_openai_reads_at_the_models_published_cached_price_and_writes_for_nothing_extra():
    found = cache_rates({"name": "openai"}, "gpt-4o-mini")
    assert (found.input, found.cache_write, found.cache_read) == (Decimal("0.15"), Decimal("0.15"), Decimal("0.075"))
    assert cache_rates({"name": "openai"}, "gpt-4.1").cache_read == Decimal("0.5")


def test_a_response_costs_its_input_its_output_its_cache_writes_and_its_cache_reads():
    sent = reply("claude-sonnet-4-5", input=1_000, output=100, read=10_000, write=2_000)
    # 1,000 × $3 + 100 × $15 + 2,000 × $3.75 + 10,000 × $0.30, per million
    assert response_cost(sent, {"name": "anthropic"}) == Decimal("0.015")
    # the same request with no cache: 13,000 input tokens at $3
    assert uncached_cost(sent, {"name": "anthropic"}) == Decimal("0.0405")


def test_a_blocks_own_price_may_name_its_cache_prices_and_otherwise_follows_its_preset():
    own = {"name": "anthropic", "price": {"input": 2, "output": 4, "cache_read": "0.5"}}
    found = cache_rates(own, "my-model")
    assert (found.cache_read, found.cache_write) == (Decimal("0.5"), Decimal("2.5"))


def test_a_model_with_no_price_costs_nothing_however_it_was_cached():
    assert response_cost(reply("llama3.1", input=5, read=5_000, write=5), {"name": "ollama"}) == Decimal("0")
