"""Each `actions` step's shape, as JSON Schema, from the spec's table of steps (tools.md, "Actions").

A step is an object with one step key (`{"click": "@e5"}`) and the companion keys its row names
(`fill` + `text`, `press` + `key`, `select` + `value`). `problems(step)` says what is wrong with one, in a
sentence that names the key — what the gallery's prompts are held to, so no example in them teaches a step
that would fail (tests/web/test_every_gallery_prompt_example_fits_the_step_schemas.py).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jsonschema

from foldrun.contract import web_engines as W

# Keys any step may carry: how long it may wait, and acting without Playwright's actionability checks.
EVERY = ("timeout", "force")
POINTER = ("human",)
CLAIM = ("text", "value", "count", "gone", "checked", "enabled", "attr", "equals", "contains", "matches")

# step -> (the companion keys it may carry, the ones it needs; a tuple inside means "one of these")
COMPANIONS: dict[str, tuple[tuple[str, ...], tuple[Any, ...]]] = {
    **{name: (POINTER, ()) for name in ("click", "dblclick", "rightclick", "hover")},
    "check": ((), ()),
    "uncheck": ((), ()),
    "drag": (("to", *POINTER), ("to",)),
    "fill": (("text", "secret"), (("text", "secret"),)),
    "type": (("text", "secret"), (("text", "secret"),)),
    "login": ((), ()),
    "insert": ((), ()),
    "pushstate": ((), ()),
    "webmcp": (("input",), ()),
    "press": (("key",), ("key",)),
    "select": (("value",), ("value",)),
    "wait": (("matches", "text", "js", "gone"), ()),
    "goto": ((), ()),
    "scroll": ((), ()),
    "screenshot": (("selector", "full", "clip", "quality", "settle", "annotate"), ()),
    "pdf": ((), ()),
    "paste": (("html", "file"), (("html", "file"),)),
    "upload": (("file",), ("file",)),
    "download": (("to",), ()),
    "extract": (("fields", "limit"), ("fields",)),
    "frame": ((), ()),
    "tab": (("url", "label"), ()),
    "back": ((), ()),
    "forward": ((), ()),
    "reload": ((), ()),
    "focus": ((), ()),
    "clear": ((), ()),
    "highlight": ((), ()),
    "keyboard": ((), ()),
    "keydown": ((), ()),
    "keyup": ((), ()),
    "mouse": (("x", "y", *POINTER), ()),
    "wheel": (("dx",), ()),
    "tap": (("selector",), ()),
    "swipe": (("selector",), ()),
    "clipboard": (("text",), ()),
    "get": (("what", "attr", "props", "key"), ()),
    "eval": ((), ()),
    "expect": (CLAIM, ()),
    "if": ((*CLAIM, "then", "else"), ()),
    "mock": (("json", "body", "file", "status", "headers", "abort"), ()),
    "unmock": ((), ()),
    "offline": ((), ()),
    "cookie": (("value", "domain", "path", "delete"), ()),
    "localstorage": (("value", "delete"), ()),
    "sessionstorage": (("value", "delete"), ()),
    "viewport": ((), ()),
    "dialog": (("text",), ()),
    "solve": (("into",), ()),
}


@lru_cache(maxsize=None)
def schema(name: str) -> dict:
    """The JSON Schema of one step named `name` (a key of W.BROWSE_STEP_ACTIONS)."""
    allowed, needed = COMPANIONS[name]
    keys = (name, *allowed, *EVERY)
    required = [name, *(k for k in needed if isinstance(k, str))]
    one_of = [{"required": [k]} for group in needed if isinstance(group, tuple) for k in group]
    shape: dict[str, Any] = {
        "type": "object",
        "properties": {k: {} for k in keys},
        "required": required,
        "additionalProperties": False,
    }
    if one_of:
        shape["oneOf"] = one_of
    return shape


def problems(step: Any) -> list[str]:
    """What is wrong with one step, each a sentence; [] when it fits its row of the table."""
    if not isinstance(step, dict):
        return [f'a step is an object such as {{"click": "#go"}}, not {step!r}']
    named = [k for k in step if k in W.BROWSE_STEP_ACTIONS]
    if len(named) != 1:
        return [f"a step has exactly one step key (it has {', '.join(named) or 'none'}): {step}"]
    name = named[0]
    allowed, needed = COMPANIONS[name]
    found: list[str] = []
    for key in step:
        if key not in (name, *allowed, *EVERY):
            takes = ", ".join(allowed) or "no other key"
            found.append(f"{name} takes {takes}, not {key!r}: {step}")
    for group in needed:
        options = group if isinstance(group, tuple) else (group,)
        if not any(k in step for k in options):
            found.append(f"{name} needs {' or '.join(repr(k) for k in options)}: {step}")
    if not found:  # the schema agrees (it is what other tools read); a disagreement is shown, never hidden
        found.extend(
            f"{name}: {error.message}" for error in jsonschema.Draft202012Validator(schema(name)).iter_errors(step)
        )
    for branch in ("then", "else"):
        for inner in step.get(branch) or [] if name == "if" else []:
            found.extend(problems(inner))
    return found
