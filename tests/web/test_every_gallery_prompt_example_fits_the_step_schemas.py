"""Every JSON example of `actions` steps in every prompt of the gallery (its agents' and its tools' files) fits
the step schemas: a model copies what it is shown, so an example with a wrong key teaches a step that fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from foldrun.contract import web_engines as W
from foldrun.web.browse.step_schemas import problems

GALLERY = Path(__file__).resolve().parents[2] / "foldrun" / "gallery"
# A JSON value in a code span, a fenced block, or a quoted argument (`actions='[...]'`).
CANDIDATES = re.compile(r"`([\[{][^`]*[\]}])`|'(\[\{.*?\}\])'|```(?:json)?\n(.*?)```", re.S)


def steps_in(value) -> list[dict]:
    """The step objects in one parsed example: a list of steps, or one step."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and set(item) & set(W.BROWSE_STEP_ACTIONS)]


def examples() -> list[tuple[str, dict]]:
    found: list[tuple[str, dict]] = []
    for path in sorted(GALLERY.rglob("*.md")):
        for match in CANDIDATES.finditer(path.read_text(encoding="utf-8")):
            text = next(group for group in match.groups() if group is not None)
            try:
                value = json.loads(text)
            except ValueError:
                continue  # prose in a code span, not JSON
            found.extend((f"{path.relative_to(GALLERY)}: {text}", step) for step in steps_in(value))
    return found


def test_the_gallery_shows_step_examples_to_hold():
    shown = [where for where, _ in examples()]
    assert any('{"fill": "@e7", "text": "text"}' in where for where in shown)
    assert any("agents/browser-agent/agent.md" in where for where in shown) and len(shown) >= 3


@pytest.mark.parametrize("where,step", examples(), ids=lambda value: str(value)[:60])
def test_every_gallery_example_step_fits_its_schema(where, step):
    assert problems(step) == [], where


def test_the_schemas_refuse_the_fill_the_browser_agent_once_taught():
    assert problems({"fill": "@e7", "value": "text"}) == [
        "fill takes text, secret, not 'value': {'fill': '@e7', 'value': 'text'}",
        "fill needs 'text' or 'secret': {'fill': '@e7', 'value': 'text'}",
    ]


def test_the_schemas_hold_the_specs_own_rows():
    for step in (
        {"fill": "#q", "text": "x"},
        {"type": "#q", "secret": "PASSWORD"},
        {"press": "", "key": "Enter"},
        {"select": "#size", "value": "L"},
        {"drag": "#a", "to": "#b", "human": True},
        {"screenshot": "page.png", "selector": "#x", "full": False},
        {"wait": "url", "matches": "**/done"},
        {"if": "url", "contains": "/login", "then": [{"click": "text=Sign in"}]},
    ):
        assert problems(step) == [], step
    assert problems({"press": "#q"}) == ["press needs 'key': {'press': '#q'}"]
    assert problems({"click": "#a", "fill": "#b", "text": "x"})[0].startswith("a step has exactly one step key")
    assert problems({"if": "url", "then": [{"select": "#s"}]}) == ["select needs 'value': {'select': '#s'}"]
