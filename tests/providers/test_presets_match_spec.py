"""The preset table in code against the table in the spec, cell for cell.

The spec (`providers.md`, found by tests/conftest.py's `spec_file`) is parsed at
test time, so a row edited on one side and not the other fails here.
"""

from __future__ import annotations

import re

import pytest

from foldrun.providers.presets import FORMATS, PRESETS, closest_presets, find_preset, get_preset
from tests.conftest import spec_file

COLUMNS = ["name", "provider", "format", "base URL", "key header", "verified", "note"]


def _spec_text() -> str:
    return spec_file("providers.md").read_text(encoding="utf-8")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _spec_rows() -> list[dict[str, str]]:
    lines = _spec_text().splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith("|") and _cells(line) == COLUMNS)
    rows = []
    for line in lines[header_at + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(COLUMNS, _cells(line))))
    return rows


def _code_row(preset) -> dict[str, str]:
    return {
        "name": f"`{preset.name}`",
        "provider": preset.provider,
        "format": preset.format,
        "base URL": f"`{preset.base_url}`",
        "key header": preset.key_header,
        "verified": "yes" if preset.verified else "",
        "note": preset.note,
    }


SPEC_ROWS = _spec_rows()


def test_the_code_has_the_spec_names_in_the_spec_order():
    assert [_code_row(p)["name"] for p in PRESETS] == [row["name"] for row in SPEC_ROWS]


@pytest.mark.parametrize("row", SPEC_ROWS, ids=[row["name"].strip("`") for row in SPEC_ROWS])
def test_every_cell_of_the_row_matches_the_spec(row):
    assert _code_row(get_preset(row["name"].strip("`"))) == row


def test_the_count_sentence_matches_the_code():
    match = re.search(r"Today that is \*\*(\d+) of (\d+)\*\*: only (.+?) have\s+ever run", _spec_text(), re.S)
    assert match, "the spec's 'Today that is **N of M**' sentence is gone"
    verified, total, names = int(match.group(1)), int(match.group(2)), re.findall(r"`([^`]+)`", match.group(3))
    assert total == len(PRESETS)
    assert verified == sum(1 for p in PRESETS if p.verified)
    assert sorted(names) == sorted(p.name for p in PRESETS if p.verified)


def test_the_design_count_of_29_presets_holds():
    assert len(PRESETS) == 29


def test_every_format_is_one_of_the_three_and_no_preset_defaults_to_responses():
    assert {p.format for p in PRESETS} == {"anthropic", "openai"}
    assert FORMATS == ("anthropic", "openai", "responses")


def test_a_per_account_row_has_no_fixed_address():
    assert get_preset("litellm").fixed_base_url is None
    assert get_preset("qwen").base_url == "(per plan — set base_url)"
    assert get_preset("anthropic").fixed_base_url == "https://api.anthropic.com"


def test_lookup_refuses_an_unknown_name_and_suggests_the_closest():
    with pytest.raises(KeyError):
        get_preset("antropic")
    assert find_preset("antropic") is None
    assert closest_presets("antropic") == ["anthropic"]
    assert closest_presets("open-router")[0] == "openrouter"
