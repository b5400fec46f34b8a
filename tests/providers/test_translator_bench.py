"""The translator bench runs and prints its ratio to the pass-through (the
1.5× target is the bench's to report, not a timed test's to assert)."""

from tests.bench.translator_bench import main


def test_the_translator_bench_prints_each_wire_against_the_pass_through(capsys):
    assert main(["--chunks", "300", "--repeat", "1"]) in (0, 1)
    printed = capsys.readouterr().out
    assert "anthropic (straight through):" in printed
    assert printed.count("(translated):") == 2
    assert "(target ≤ 1.5×)" in printed
