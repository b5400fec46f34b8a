"""Public ids (`run_…`, `stp_…`) are a prefix and random letters of Crockford's base32 alphabet, each letter as
likely as any other: they are the only handle a person or a program has on a row, so they must not be guessable
or lean towards some letters."""

from __future__ import annotations

import collections

from foldrun.ids import PublicId, new_id

ALPHABET = set("0123456789abcdefghjkmnpqrstvwxyz")


def test_an_id_is_its_prefix_and_sixteen_letters_of_the_alphabet():
    made = new_id("run")
    prefix, letters = made.split("_")
    assert prefix == "run"
    assert len(letters) == 16
    assert set(letters) <= ALPHABET


def test_a_field_default_makes_ids_of_its_length():
    assert len(PublicId("sess", length=24)().split("_")[1]) == 24


def test_every_letter_comes_up_about_as_often_as_any_other():
    counts = collections.Counter("".join(new_id("x").split("_")[1] for _ in range(4000)))  # 64,000 letters
    assert set(counts) == ALPHABET
    # 2,000 expected each; a bias of a sixteenth (one letter in 32 never drawn, its share going to another)
    # would put one count at 4,000, and chance alone stays within ±250 (over 5 standard deviations).
    assert all(1750 < n < 2250 for n in counts.values()), counts


def test_ids_do_not_repeat():
    assert len({new_id("run") for _ in range(10_000)}) == 10_000
