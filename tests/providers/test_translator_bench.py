"""The translator bench runs, and translating stays within 1.5× of passing an Anthropic stream through."""
from tests.bench.translator_bench import main


def test_translating_a_long_streamed_reply_costs_at_most_one_and_a_half_times_the_pass_through():
    assert main(["--chunks", "1500", "--repeat", "7"]) == 0
