"""A `timezone:` value ZoneInfo cannot open — not in the database, path-like, a folder of zones, a name too long
to open — is the contract's sentence, never ZoneInfo's error."""

from __future__ import annotations

import pytest

from foldrun.contract.model.values import timezone_problem


@pytest.mark.parametrize(
    "value", ["Mars/Olympus", "../etc/passwd", "/etc/localtime", "America", "Europe/" * 80, "Europe/Paris\x00"]
)
def test_a_value_that_is_no_time_zone_is_one_foldrun_does_not_know(value):
    assert timezone_problem(value) == "is not a time zone foldrun knows"


def test_an_iana_name_is_known():
    assert timezone_problem(" Australia/Sydney ") is None
